"""Open every page of a built docs site in headless Chromium at 1280 px and list the code blocks
that scroll sideways: the browser's view of what `test_built_site.py` checks by arithmetic.

    mkdocs build --strict -d /tmp/site && python -m tools.site_in_browser /tmp/site

Needs a `chromium` binary (`apt-get install chromium`); nothing in the test suite does. Each page
is copied next to itself with a script appended that measures `scrollWidth` against `clientWidth`
of every `pre > code`, and Chromium's `--dump-dom` returns the report.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

WINDOW = "1280,900"
_MEASURE = """<script>
(function () {
  const report = [];
  const content = document.querySelector(".md-content__inner");
  report.push("content " + (content ? content.clientWidth : 0) + " px");
  document.querySelectorAll(".md-content pre > code").forEach((code) => {
    if (code.scrollWidth > code.clientWidth + 1) {
      const longest = code.textContent.split("\\n")
        .reduce((a, b) => (b.length > a.length ? b : a), "");
      report.push(code.scrollWidth + " > " + code.clientWidth + " px: " + longest.trim());
    }
  });
  const out = document.createElement("pre");
  out.id = "site-in-browser";
  out.textContent = JSON.stringify(report);
  document.body.appendChild(out);
})();
</script></body>"""


def measure(page: Path, chromium: str) -> list[str]:
    """The report of one page: its content width, then each block that scrolls sideways."""
    probe = page.with_name("site-in-browser.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _MEASURE, 1))
    try:
        dom = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--window-size={WINDOW}",
             "--virtual-time-budget=3000", "--dump-dom", probe.as_uri()],
            capture_output=True, text=True, timeout=60, check=False,
        ).stdout  # fmt: skip
    finally:
        probe.unlink()
    found = re.search(r'<pre id="site-in-browser">(.*?)</pre>', dom, re.DOTALL)
    return list(json.loads(html.unescape(found.group(1)))) if found else ["(no report)"]


def main(argv: list[str]) -> int:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None or len(argv) != 1:
        print("usage: python -m tools.site_in_browser SITE_DIR (needs chromium)", file=sys.stderr)
        return 2
    site, scrolling = Path(argv[0]), 0
    for page in sorted(site.rglob("index.html")):
        content, *blocks = measure(page, chromium)
        scrolling += len(blocks)
        print(f"{page.parent.relative_to(site).as_posix()}: {content}, {len(blocks)} scrolling")
        for block in blocks:
            print(f"    {block[:100]}")
    return 1 if scrolling else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
