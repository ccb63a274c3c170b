"""Live mode: the suites and open questions against the real gateway (`./dev live`).

Never part of the default run: the tests here carry the `live` marker and are deselected unless
the runner (`python -m tools.live`) sets `KIMI_LIVE=1`. The offline proof
(`tests/integration_tests/test_live_offline.py`) drives the same runner against a loopback server.
"""
