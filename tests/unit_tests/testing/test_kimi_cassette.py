"""The `kimi_cassette` pytest plugin, used as a user would: a throwaway project in a temporary
folder records its test against a loopback gateway with a fake key, then replays it with no key,
no server and sockets disabled; the cassette holds no form of the key.

The loopback gateway is a `FakeKimiGateway` behind a real HTTP server on 127.0.0.1, which also
echoes the key back (a header, a cookie, the reply text raw, JSON-escaped and URL-encoded), as a
misbehaving proxy might. The project also holds the docs' `pytest-file` samples, so they run too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import quote, quote_plus

import httpx
import pytest

from langchain_kimi.testing import FakeKimiGateway, cassettes
from tests.support.doc_samples import PYTEST_FILES
from tests.support.loopback import LoopbackServer, QuietHandler, running

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

KEY = "sk-fake/Rec0rd+Key=NotReal_0123456789"
KEY_FORMS = [
    KEY,
    json.dumps(KEY)[1:-1],
    KEY.replace("/", "\\/"),
    quote(KEY, safe=""),
    quote_plus(KEY),
]
ECHO = f"(echo {KEY} {json.dumps(KEY)} {quote(KEY, safe='')} {quote_plus(KEY)})"

USER_TESTS = """
import asyncio

from langchain_kimi import ChatKimi


def test_capital_openai(kimi_cassette):
    model = ChatKimi(model="kimi-k3.1-pro", protocol="openai")
    assert model.invoke("Capital of France?").text.startswith("Paris.")
    assert "".join(c.text for c in model.stream("Capital of Italy?")) == "Rome."


def test_capital_anthropic(kimi_cassette):
    model = ChatKimi(model="kimi-k3.1-pro", protocol="anthropic")
    reply = model.invoke("Capital of Spain?")
    assert reply.text.startswith("Madrid.")
    assert reply.additional_kwargs["thinking_blocks"][0]["signature"]
    assert "".join(c.text for c in model.stream("Capital of Japan?")) == "Tokyo."
    assert asyncio.run(model.ainvoke("Capital of Peru?")).text == "Lima."
"""


def _gateway_server(gw: FakeKimiGateway) -> LoopbackServer:
    class Handler(QuietHandler):
        def do_POST(self) -> None:
            content = self.rfile.read(int(self.headers["content-length"]))
            request = httpx.Request(
                "POST", f"http://gw{self.path}", headers=dict(self.headers), content=content
            )
            response = gw.transport.handle_request(request)
            body = response.read()
            self.send_response(response.status_code)
            for name, value in response.headers.items():
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("x-echo-key", KEY)
            self.send_header("set-cookie", f"session={quote(KEY, safe='')}; Path=/")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return LoopbackServer(Handler)


# Replays run with pytest-socket's `--disable-socket --allow-unix-socket`, as this repository's
# suite does: no network socket may open; asyncio's event loop needs its unix self-pipe.
def _pytest(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("EVOLINK_", "PYTEST_", "VCR_"))
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            *args,
        ],
        cwd=project,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("user_project")
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_agent.py").write_text(textwrap.dedent(USER_TESTS))
    for sample in PYTEST_FILES:  # each starts with a `# tests/<file>.py` comment
        name = sample.code.splitlines()[0].removeprefix("# ").strip()
        assert name.startswith("tests/test_"), sample.id
        (root / name).write_text(sample.code + "\n")
    return root


@pytest.fixture(scope="module")
def recorded(project: Path) -> subprocess.CompletedProcess[str]:
    gw = FakeKimiGateway()
    for answer in ("Paris. " + ECHO, "Rome.", "Madrid. " + ECHO, "Tokyo.", "Lima."):
        gw.add_reply(text=answer)
    gw.add_reply(text="Paris", reasoning="The capital of France is Paris.")  # the docs' sample
    with running(_gateway_server(gw)) as server:
        done = _pytest(project, {"EVOLINK_API_KEY": KEY, "EVOLINK_BASE_URL": server.url}, "tests")
    assert gw.remaining == 0, done.stdout + done.stderr
    return done


def test_a_missing_cassette_is_recorded_when_a_key_is_set(
    project: Path, recorded: subprocess.CompletedProcess[str]
) -> None:
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    folder = project / "tests" / "cassettes" / "test_agent"
    assert sorted(p.name for p in folder.iterdir()) == [
        "test_capital_anthropic.yaml",
        "test_capital_openai.yaml",
    ]
    assert "/v1/messages" in (folder / "test_capital_anthropic.yaml").read_text()
    assert len(PYTEST_FILES) == 1, "one loopback reply is scripted per docs sample"
    assert (project / "tests" / "cassettes" / "test_capital" / "test_capital.yaml").is_file()


def test_the_cassettes_hold_no_key(
    project: Path, recorded: subprocess.CompletedProcess[str]
) -> None:
    cassettes = sorted((project / "tests" / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 3
    for cassette in cassettes:
        text = cassette.read_text()
        for form in KEY_FORMS:
            assert form not in text, (cassette.name, form)
        lowered = text.lower()
        for header in ("authorization", "x-api-key", "x-echo-key", "set-cookie", "cookie:"):
            assert header not in lowered, (cassette.name, header)
    echoed = (
        project / "tests" / "cassettes" / "test_agent" / "test_capital_openai.yaml"
    ).read_text()
    assert "(echo *** " in echoed, "the reply was recorded, its echoes of the key replaced"


def test_replay_needs_no_key_no_server_and_no_socket(
    project: Path, recorded: subprocess.CompletedProcess[str]
) -> None:
    done = _pytest(project, {}, "tests", "--disable-socket", "--allow-unix-socket")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout


def test_a_request_without_a_recording_fails_saying_how_to_record(
    project: Path, recorded: subprocess.CompletedProcess[str], tmp_path: Path
) -> None:
    copy = shutil.copytree(project, tmp_path / "project")  # the recorded project stays as it was
    changed = copy / "tests" / "test_changed.py"
    changed.write_text(
        textwrap.dedent(USER_TESTS).replace("Capital of France?", "Capital of Peru?")
    )
    shutil.copytree(
        copy / "tests" / "cassettes" / "test_agent", copy / "tests" / "cassettes" / "test_changed"
    )
    done = _pytest(copy, {}, "tests/test_changed.py", "--disable-socket", "--allow-unix-socket")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout
    assert "no recording of POST /v1/chat/completions" in done.stdout
    assert (
        "EVOLINK_API_KEY=... pytest --kimi-record 'tests/test_changed.py::test_capital_openai'"
        in done.stdout
    )


def test_a_missing_cassette_without_a_key_fails_saying_how_to_record(
    project: Path, tmp_path: Path
) -> None:
    copy = shutil.copytree(project, tmp_path / "project")
    (copy / "tests" / "test_lonely.py").write_text(
        "def test_nothing_recorded(kimi_cassette):\n    pass\n"
    )
    done = _pytest(copy, {}, "tests/test_lonely.py")
    assert done.returncode == 1
    assert "no cassette" in done.stdout
    assert "--kimi-record" in done.stdout


def test_a_test_that_fails_while_recording_keeps_no_cassette(project: Path, tmp_path: Path) -> None:
    copy = shutil.copytree(project, tmp_path / "project")
    (copy / "tests" / "test_broken.py").write_text(
        "from langchain_kimi import ChatKimi\n\n\n"
        "def test_broken(kimi_cassette):\n"
        "    ChatKimi().invoke('Hi')\n"
        "    raise AssertionError('the code under test is broken')\n"
    )
    gw = FakeKimiGateway().add_reply(text="Hello.")
    with running(_gateway_server(gw)) as server:
        env = {"EVOLINK_API_KEY": KEY, "EVOLINK_BASE_URL": server.url}
        done = _pytest(copy, env, "tests/test_broken.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert gw.remaining == 0, "the call was made (and recorded) before the test failed"
    assert "failed while recording" in done.stdout
    assert not (copy / "tests" / "cassettes" / "test_broken" / "test_broken.yaml").exists()


@pytest.mark.parametrize(
    ("nodeid", "name"),
    [
        ("tests/test_a.py::test_x", "test_x"),
        ("tests/test_a.py::test_x[openai-k3.1]", "test_x_openai-k3.1"),
        ("tests/test_a.py::TestAgent::test_x[a b]", "TestAgent.test_x_a_b"),
    ],
)
def test_the_cassette_path_names_module_class_test_and_parameters(nodeid: str, name: str) -> None:
    path = cassettes.cassette_path(Path("/p"), Path("/p/tests/test_a.py"), nodeid)
    assert path == Path(f"/p/tests/cassettes/test_a/{name}.yaml")
