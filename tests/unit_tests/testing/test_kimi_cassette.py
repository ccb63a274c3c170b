"""The `kimi_cassette` pytest plugin, used as a user would: a throwaway project in a temporary
folder records its test against a loopback gateway with a fake key, then replays it with no key,
no server and sockets disabled; the cassette holds no form of the key.

The loopback gateway is a `FakeKimiGateway` behind a real HTTP server on 127.0.0.1, which also
echoes the key back (a header, a cookie, the reply text raw, JSON-escaped and URL-encoded), as a
misbehaving proxy might. The project also holds the docs' `pytest-file` samples, so they run too.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import httpx
import pytest
import yaml

import langchain_kimi
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
            self.send_header("x-echoed", self.headers["authorization"].removeprefix("Bearer "))
            self.send_header("set-cookie", f"session={quote(KEY, safe='')}; Path=/")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return LoopbackServer(Handler)


# Replays run with pytest-socket's `--disable-socket --allow-unix-socket`, as this repository's
# suite does: no network socket may open; asyncio's event loop needs its unix self-pipe. The
# project's pytest imports the `langchain_kimi` this test imports (a checkout other than the
# installed one included).
def _pytest(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("EVOLINK_", "PYTEST_", "VCR_"))
    }
    if clean.get("MUTANT_UNDER_TEST") == "stats":
        # mutmut's first pass counts which functions each test calls, in its own process; a
        # child's counter finds no [tool.mutmut] in the project and fails, so the child runs the
        # unmutated code. Under a mutant the child inherits the mutant and runs it too.
        del clean["MUTANT_UNDER_TEST"]
    clean["PYTHONPATH"] = os.pathsep.join(
        [str(Path(langchain_kimi.__file__).parents[1]), *filter(None, [clean.get("PYTHONPATH")])]
    )
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


OWN_KEY = "own-Key/NotReal_9876543210"
"""A key given as `ChatKimi(api_key=...)`, unlike `EVOLINK_API_KEY`; not shaped like `sk-...`."""

SAME_TEST = """
from langchain_kimi import ChatKimi


def test_same(kimi_cassette):
    assert ChatKimi(protocol="openai").invoke("Which folder?").text == "Folder {folder}."
"""

OWN_KEY_TEST = f"""
from langchain_kimi import ChatKimi


def test_own_key(kimi_cassette):
    assert ChatKimi(api_key={OWN_KEY!r}, protocol="anthropic").invoke("Hi").text == "Hello."
"""


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
    assert '-      "content": "Capital of France?",' in done.stdout
    assert '+      "content": "Capital of Peru?",' in done.stdout
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
    ("nodeid", "path"),
    [
        ("tests/test_a.py::test_x", "test_a/test_x.yaml"),
        ("tests/test_a.py::test_x[openai-k3.1]", "test_a/test_x[openai-k3.1].yaml"),
        ("tests/a/test_dup.py::test_same", "a/test_dup/test_same.yaml"),
        ("tests/b/test_dup.py::test_same", "b/test_dup/test_same.yaml"),
        ("tests/a/test_dup.py::TestAgent::test_x", "a/test_dup/TestAgent.test_x.yaml"),
        ("src/test_a.py::test_x", "@rootdir/src/test_a/test_x.yaml"),
        ("../other/test_a.py::test_x", "@rootdir/@parent/other/test_a/test_x.yaml"),
    ],
)
def test_the_cassette_path_is_the_full_node_id(nodeid: str, path: str) -> None:
    assert cassettes.cassette_path(Path("/p"), nodeid) == Path("/p/tests/cassettes", path)


def test_parameters_a_file_name_cannot_hold_still_name_distinct_cassettes() -> None:
    ids = ["test_x[a b]", "test_x[a_b]", "test_x[a/b]", "test_x[a:b]", "test_x[" + "p" * 300 + "]"]
    paths = [cassettes.cassette_path(Path("/p"), f"tests/test_a.py::{i}") for i in ids]
    assert len(set(paths)) == len(ids)
    assert paths[1].name == "test_x[a_b].yaml", "a name kept whole carries no hash"
    assert paths[0].name.startswith("test_x[a_b]~")
    assert paths[0].suffix == ".yaml"
    assert all(p.parent == Path("/p/tests/cassettes/test_a") for p in paths)
    assert all(len(p.name) < 200 for p in paths)


@pytest.mark.parametrize(
    ("key", "force", "exists", "record"),
    [
        ("", False, False, False),
        ("", False, True, False),
        ("k", False, False, True),
        ("k", False, True, False),
        ("k", True, False, True),
        ("k", True, True, True),
    ],
)
def test_a_cassette_is_recorded_with_a_key_when_missing_or_forced(
    key: str,
    force: bool,
    exists: bool,
    record: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(cassettes.KEY_ENV, key)
    path = cassettes.cassette_path(tmp_path, "tests/test_a.py::test_x")
    if exists:
        path.parent.mkdir(parents=True)
        path.write_text("interactions: []\n")
    plan = cassettes.plan(tmp_path, "tests/test_a.py::test_x", force_record=force)
    assert (plan.path, plan.record, plan.nodeid) == (path, record, "tests/test_a.py::test_x")


def test_kimi_record_without_a_key_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(cassettes.KEY_ENV, raising=False)
    with pytest.raises(cassettes.NoRecordingError, match=r"--kimi-record needs EVOLINK_API_KEY"):
        cassettes.plan(tmp_path, "tests/test_a.py::test_x", force_record=True)


@pytest.fixture
def openai_cassette(
    project: Path, recorded: subprocess.CompletedProcess[str], tmp_path: Path
) -> Path:
    """A copy of a recording of two calls (an invoke, a stream) that tests may change."""
    source = project / "tests" / "cassettes" / "test_agent" / "test_capital_openai.yaml"
    return Path(shutil.copy(source, tmp_path / "recorded.yaml"))


def _recorded_bodies(cassette: Path) -> list[dict[str, Any]]:
    interactions = yaml.safe_load(cassette.read_text())["interactions"]
    return [json.loads(i["request"]["body"]) for i in interactions]


def _replay(cassette: Path, *bodies: dict[str, Any]) -> None:
    plan = cassettes.Plan(path=cassette, record=False, nodeid="tests/test_x.py::test_x")
    with cassettes.use(plan), httpx.Client() as client:
        for body in bodies:
            client.post("http://gw.example/v1/chat/completions", json=body)


def test_a_changed_request_shows_the_nearest_recording_and_the_body_diff(
    openai_cassette: Path,
) -> None:
    _invoke, stream = _recorded_bodies(openai_cassette)
    changed = json.loads(json.dumps(stream).replace("Capital of Italy?", "Capital of Chile?"))
    with pytest.raises(cassettes.NoRecordingError) as caught:
        _replay(openai_cassette, changed)
    message = str(caught.value)
    assert "Nearest recorded request: #2 of 2, POST /v1/chat/completions" in message
    assert '-      "content": "Capital of Italy?",' in message
    assert '+      "content": "Capital of Chile?",' in message
    assert "Capital of France?" not in message, "the diff is against the nearest recording"
    assert "recording again would keep that bug" in message
    assert "pytest --kimi-record 'tests/test_x.py::test_x'" in message


def test_a_request_sent_more_often_than_recorded_says_so(openai_cassette: Path) -> None:
    invoke, _ = _recorded_bodies(openai_cassette)
    with pytest.raises(cassettes.NoRecordingError, match=r"matches recording #1, already replayed"):
        _replay(openai_cassette, invoke, invoke)


def test_an_unreadable_cassette_names_its_file_and_line(openai_cassette: Path) -> None:
    lines = openai_cassette.read_text().splitlines()
    lines[6] = "  broken: [unclosed: {"  # a hand edit gone wrong
    openai_cassette.write_text("\n".join(lines) + "\n")
    with pytest.raises(cassettes.UnreadableCassetteError) as caught:
        _replay(openai_cassette)
    assert f"cannot read {openai_cassette}, line " in str(caught.value)
    line = int(str(caught.value).split(", line ")[1].split(",")[0])
    assert 7 <= line <= 9, caught.value


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"interactions: []\n\xff\xfe\n", "CassetteDecodeError: Can't read Cassette, Encoding"),
        (b"- just a list\n", "not a vcrpy cassette (TypeError: list indices"),
        (b"requests: []\n", "not a vcrpy cassette (KeyError: 'interactions')"),
    ],
)
def test_a_file_that_is_no_cassette_names_itself(
    content: bytes, problem: str, tmp_path: Path
) -> None:
    cassette = tmp_path / "odd.yaml"
    cassette.write_bytes(content)
    with pytest.raises(cassettes.UnreadableCassetteError, match=f"cannot read {cassette}") as e:
        _replay(cassette)
    assert problem in str(e.value)
    assert str(e.value).endswith(
        ". Restore it from version control, or delete it and record it again with a key."
    )


def test_recording_again_starts_from_an_empty_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "broken.yaml"
    cassette.write_text("interactions: [unclosed\n")
    plan = cassettes.Plan(path=cassette, record=True, nodeid="tests/test_x.py::test_x")
    with cassettes.use(plan) as loaded:
        assert len(loaded) == 0, "the old file is neither read nor kept"


def test_two_tests_of_the_same_name_in_two_folders_keep_their_own_cassettes(
    tmp_path: Path,
) -> None:
    """Same module name, same test name, same prompt: each replays its own answer; and a key given
    as `api_key=` (not `EVOLINK_API_KEY`) that the gateway echoes is not written either."""
    for folder in ("a", "b"):
        (tmp_path / "tests" / folder).mkdir(parents=True)
        (tmp_path / "tests" / folder / "__init__.py").write_text("")
        (tmp_path / "tests" / folder / "test_dup.py").write_text(SAME_TEST.format(folder=folder))
    (tmp_path / "tests" / "test_own_key.py").write_text(OWN_KEY_TEST)
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    tests = ["tests/a/test_dup.py", "tests/b/test_dup.py", "tests/test_own_key.py"]
    gw = FakeKimiGateway()
    for answer in ("Folder a.", "Folder b.", "Hello."):
        gw.add_reply(text=answer)
    with running(_gateway_server(gw)) as server:
        recorded = _pytest(
            tmp_path, {"EVOLINK_API_KEY": KEY, "EVOLINK_BASE_URL": server.url}, *tests
        )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    root = tmp_path / "tests" / "cassettes"
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.yaml")) == [
        "a/test_dup/test_same.yaml",
        "b/test_dup/test_same.yaml",
        "test_own_key/test_own_key.yaml",
    ]
    own = (root / "test_own_key" / "test_own_key.yaml").read_text()
    assert "x-echoed:\n      - '***'" in own, "the gateway echoed the key; the echo was replaced"
    for form in [OWN_KEY, json.dumps(OWN_KEY)[1:-1], quote(OWN_KEY, safe="")]:
        assert form not in own
    replayed = _pytest(tmp_path, {}, *tests, "--disable-socket", "--allow-unix-socket")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "3 passed" in replayed.stdout


# In-process recordings: vcrpy records what an `httpx.MockTransport` answers as it records a real
# server, so the recorder's scrubbing, its safety net and the replay run in this process (where
# mutmut sees them), without a subprocess or a socket.
OWN_TOKEN = "own-Token/NotReal_13579"
"""A bearer token no key-shaped pattern catches: only the bearer it was sent as can remove it."""


def _record(
    path: Path,
    handler: Any,
    *requests: tuple[str, dict[str, Any]],
    headers: dict[str, str] | None = None,
) -> None:
    plan = cassettes.Plan(path=path, record=True, nodeid="tests/test_x.py::test_x")
    with cassettes.use(plan), httpx.Client(transport=httpx.MockTransport(handler)) as client:
        for url, body in requests:
            client.post(f"http://gw.example{url}", json=body, headers=headers)


def _send(cassette: Path, url: str, body: dict[str, Any]) -> httpx.Response:
    plan = cassettes.Plan(path=cassette, record=False, nodeid="tests/test_x.py::test_x")
    with cassettes.use(plan), httpx.Client() as client:
        return client.post(f"http://gw.example{url}", json=body)


def _ok(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"echo": json.loads(request.content)})


def test_a_recording_holds_neither_the_key_nor_the_bearer_it_was_sent_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cassettes.KEY_ENV, KEY)

    def echo(request: httpx.Request) -> httpx.Response:
        body = f'{{"text": "(echo {KEY} {OWN_TOKEN} caf\\u00e9 café)"}}'.encode()
        return httpx.Response(
            200,
            headers={
                "x-echo": KEY,
                "x-echoed": f"token {OWN_TOKEN}",
                "set-cookie": f"session={quote(KEY, safe='')}",
                "x-plain": "kept",
            },
            content=body,
        )

    cassette = tmp_path / "rec.yaml"
    _record(
        cassette,
        echo,
        (f"/v1/chat/completions?api_key={quote(KEY, safe='')}&q=1", {"say": KEY}),
        headers={"authorization": f"Bearer {OWN_TOKEN}", "x-trace": f"t {OWN_TOKEN}"},
    )
    text = cassette.read_text()
    for form in [*KEY_FORMS, OWN_TOKEN, quote(OWN_TOKEN, safe="")]:
        assert form not in text, form
    (interaction,) = yaml.safe_load(text)["interactions"]
    request, response = interaction["request"], interaction["response"]
    assert "authorization" not in {name.lower() for name in request["headers"]}
    assert request["headers"]["x-trace"] == ["t ***"], "a header echoing the bearer is cleaned"
    assert request["uri"] == "http://gw.example/v1/chat/completions?api_key=***&q=1"
    assert json.loads(request["body"]) == {"say": "***"}
    headers = response["headers"]
    assert "set-cookie" not in headers, "a credential-named header goes whole"
    assert (headers["x-echo"], headers["x-echoed"]) == (["***"], ["token ***"])
    assert headers["x-plain"] == ["kept"]
    body = response["body"]["string"]  # vcrpy writes a UTF-8 body as text
    assert body == '{"text": "(echo *** *** caf\\u00e9 café)"}'
    assert headers["content-length"] == [str(len(body.encode()))], "the scrubbed body's length"


def test_a_reply_without_a_secret_is_recorded_byte_for_byte_and_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cassettes.KEY_ENV, KEY)
    raw = b'{"text": "caf\xc3\xa9"}\n\xff\xfe not UTF-8'

    def binary(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"x-plain": "kept"}, content=raw)

    cassette = tmp_path / "rec.yaml"
    _record(
        cassette,
        binary,
        ("/v1/messages", {"q": 1}),
        headers={"authorization": f"Bearer {OWN_TOKEN}"},
    )
    replayed = _send(cassette, "/v1/messages", {"q": 1})
    assert (replayed.status_code, replayed.content) == (200, raw)
    assert replayed.headers["content-length"] == str(len(raw))
    assert replayed.headers["x-plain"] == "kept"


def test_a_key_left_where_no_scrubber_looks_deletes_the_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reason phrase is written as it came: the read-back check is the last guard."""
    monkeypatch.setenv(cassettes.KEY_ENV, KEY)

    def leaky(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, extensions={"reason_phrase": f"OK {KEY}".encode()})

    cassette = tmp_path / "rec.yaml"
    with pytest.raises(AssertionError) as caught:
        _record(cassette, leaky, ("/v1/messages", {"q": 1}))
    assert str(caught.value) == f"kimi_cassette: {cassette} held the API key; it was deleted"
    assert not cassette.exists()


def test_secrets_take_each_bearer_token_once_and_no_empty_one() -> None:
    secrets = cassettes.Secrets(None)
    secrets.add_bearer("Bearer ")
    assert secrets.body(b"") == b"", "an empty bearer is no secret"
    secrets.add_bearer(f"Bearer {OWN_TOKEN} ")
    secrets.add_bearer(f"Bearer {OWN_TOKEN}")
    assert secrets.scrubber.secrets == (OWN_TOKEN,)
    assert secrets.body(f"a {OWN_TOKEN} b") == "a *** b"


def test_secrets_clean_bytes_and_text_and_pass_anything_else() -> None:
    secrets = cassettes.Secrets(OWN_KEY)
    assert secrets.body(f"x {OWN_KEY}") == "x ***"
    assert secrets.body(f"x {OWN_KEY} é".encode()) == "x *** é".encode()
    undecodable = b"\xff " + OWN_KEY.encode()
    assert secrets.body(undecodable) == "\ufffd ***".encode()
    assert secrets.body(b"\xff kept") == b"\xff kept", "nothing to remove: the bytes stay"
    assert secrets.body(None) is None
    assert cassettes._as_bytes("é") == "é".encode()
    assert cassettes._as_bytes(b"\xff") == b"\xff"
    assert cassettes._as_list("v") == ["v"]
    assert cassettes._as_list(["v", "w"]) == ["v", "w"]


@pytest.mark.parametrize(
    ("nodeid", "name"),
    [
        ("tests.py::test_x", "@rootdir/tests/test_x.yaml"),
        ("tests/test_a.py::test_" + "x" * 145, "test_a/test_" + "x" * 145 + ".yaml"),
    ],
)
def test_cassette_path_edges(nodeid: str, name: str) -> None:
    """A module named `tests.py` is no folder; a name of exactly 150 characters is kept whole."""
    assert cassettes.cassette_path(Path("/p"), nodeid) == Path("/p/tests/cassettes", name)


def test_a_module_level_node_id_records_as_module_with_its_hash() -> None:
    digest = hashlib.sha256(b"tests/test_a.py").hexdigest()[:8]
    path = cassettes.cassette_path(Path("/p"), "tests/test_a.py")
    assert path == Path(f"/p/tests/cassettes/test_a/module~{digest}.yaml")


def test_the_body_matcher_compares_parsed_json_and_says_so() -> None:
    def request(body: Any) -> Any:
        return type("Request", (), {"body": body})()

    cassettes._json_body_matcher(request(b'{"a": 1, "b": [2]}'), request('{"b":[2],"a":1}'))
    cassettes._json_body_matcher(request(None), request(b""))
    cassettes._json_body_matcher(request("not json"), request(b"not json"))
    with pytest.raises(AssertionError) as caught:
        cassettes._json_body_matcher(request(b'{"a": 1}'), request(b'{"a": 2}'))
    assert str(caught.value) == "request bodies differ"


def test_where_names_the_yaml_line_column_and_problem() -> None:
    mark = yaml.Mark("c.yaml", 0, 6, 2, None, None)
    scanner = yaml.scanner.ScannerError(problem="found a tab", problem_mark=mark)
    assert cassettes._where(scanner) == ", line 7, column 3: found a tab"
    assert cassettes._where(yaml.MarkedYAMLError(problem_mark=mark)) == (
        ", line 7, column 3: invalid YAML"
    )
    wrapped = ValueError("bad")
    wrapped.__cause__ = scanner
    assert cassettes._where(wrapped) == ", line 7, column 3: found a tab"
    assert cassettes._where(KeyError("x")) == ": not a vcrpy cassette (KeyError: 'x')"


def test_pretty_body_lines() -> None:
    assert cassettes._pretty_body(None) == ["null"]
    assert cassettes._pretty_body(b"") == ["null"]
    assert cassettes._pretty_body(b"not json\nline 2") == ["not json", "line 2"]
    assert cassettes._pretty_body('{"q": "Café", "a": 1}') == [
        "{",
        '  "a": 1,',
        '  "q": "Café"',
        "}",
    ]


def test_discarding_a_recording_deletes_it_and_warns_from_the_kit(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    path.write_text("interactions: []\n")
    plan = cassettes.Plan(path=path, record=True, nodeid="tests/test_x.py::test_x")
    with pytest.warns(UserWarning, match="failed while recording") as caught:
        cassettes.discard(plan)
    assert [str(w.message) for w in caught] == [
        f"kimi_cassette: tests/test_x.py::test_x failed while recording; {path} was not kept"
    ]
    assert caught[0].filename == cassettes.__file__
    assert not path.exists()
    cassettes.discard(plan)  # nothing left: no warning, no error


def test_an_empty_cassette_says_it_holds_no_recording(tmp_path: Path) -> None:
    cassette = tmp_path / "empty.yaml"
    cassette.write_text("interactions: []\nversion: 1\n")
    with pytest.raises(cassettes.NoRecordingError, match=r"\nThe cassette holds no recording\.\n"):
        _send(cassette, "/v1/messages", {"q": 1})


def test_the_nearest_recording_is_on_the_same_path_first_then_the_closest_body(
    tmp_path: Path,
) -> None:
    cassette = tmp_path / "rec.yaml"
    france = {"messages": [{"content": "Capital of France?"}], "model": "m"}
    other = {"messages": [{"content": "Something else entirely"}], "tools": [1, 2, 3]}
    _record(cassette, _ok, ("/v1/messages", france), ("/v1/chat/completions", other))
    spain = json.loads(json.dumps(france).replace("France", "Spain"))
    with pytest.raises(cassettes.NoRecordingError) as caught:
        _send(cassette, "/v1/chat/completions", spain)
    assert "Nearest recorded request: #2 of 2, POST /v1/chat/completions" in str(caught.value)
    with pytest.raises(cassettes.NoRecordingError) as caught:
        _send(cassette, "/v1/messages", spain)
    assert "Nearest recorded request: #1 of 2, POST /v1/messages" in str(caught.value)


def test_the_same_body_on_another_path_says_the_bodies_are_the_same(tmp_path: Path) -> None:
    cassette = tmp_path / "rec.yaml"
    _record(cassette, _ok, ("/v1/messages", {"q": 1}))
    with pytest.raises(cassettes.NoRecordingError) as caught:
        _send(cassette, "/v1/chat/completions", {"q": 1})
    assert "body sent (+):\n(the bodies are the same)\n" in str(caught.value)


def test_the_body_diff_is_unified_with_two_lines_of_context(tmp_path: Path) -> None:
    cassette = tmp_path / "rec.yaml"
    recorded = {f"k{i:02}": i for i in range(1, 10)}
    _record(cassette, _ok, ("/v1/messages", recorded))
    with pytest.raises(cassettes.NoRecordingError) as caught:
        _send(cassette, "/v1/messages", {**recorded, "k05": 50})
    expected = "\n".join(
        [
            "--- recorded",
            "+++ sent",
            "@@ -4,5 +4,5 @@",
            '   "k03": 3,',
            '   "k04": 4,',
            '-  "k05": 5,',
            '+  "k05": 50,',
            '   "k06": 6,',
            '   "k07": 7,',
        ]
    )
    assert f"body sent (+):\n{expected}\n" in str(caught.value)


@pytest.mark.parametrize(("items", "more"), [(26, None), (27, "... (2 more lines)")])
def test_a_body_diff_longer_than_sixty_lines_is_cut(
    items: int, more: str | None, tmp_path: Path
) -> None:
    """Recorded `items` numbers, sent `items + 1` others: a diff of 8 + 2 * items lines."""
    cassette = tmp_path / "rec.yaml"
    _record(cassette, _ok, ("/v1/messages", {"x": list(range(items))}))
    with pytest.raises(cassettes.NoRecordingError) as caught:
        _send(cassette, "/v1/messages", {"x": list(range(100, 101 + items))})
    diff = str(caught.value).split("body sent (+):\n")[1].split(f"\n{cassettes._REPLAY_ADVICE}")[0]
    lines = diff.splitlines()
    assert lines[0] == "--- recorded"
    if more is None:
        assert len(lines) == 60
        assert "more lines" not in diff
    else:
        assert len(lines) == 61
        assert lines[-1] == more


def test_a_request_body_that_is_not_utf8_replays_and_a_changed_one_shows_the_diff(
    tmp_path: Path,
) -> None:
    """A body vcrpy keeps as bytes (`!!binary`) is compared byte for byte: it replays, and a
    different one fails with the nearest recording, undecodable bytes shown as U+FFFD."""
    cassette = tmp_path / "rec.yaml"
    recorded = b"\xff\xfe recorded, not UTF-8"
    plan = cassettes.Plan(path=cassette, record=True, nodeid="tests/test_x.py::test_x")
    with cassettes.use(plan), httpx.Client(transport=httpx.MockTransport(_binary_ok)) as client:
        client.post("http://gw.example/v1/messages", content=recorded)
    plan = cassettes.Plan(path=cassette, record=False, nodeid="tests/test_x.py::test_x")
    with cassettes.use(plan), httpx.Client() as client:
        replayed = client.post("http://gw.example/v1/messages", content=recorded)
        assert (replayed.status_code, replayed.content) == (200, b"ok")
    with (
        pytest.raises(cassettes.NoRecordingError) as caught,
        cassettes.use(plan),
        httpx.Client() as client,
    ):
        client.post("http://gw.example/v1/messages", content=b"\xff\xfe sent, not UTF-8")
    assert "-\ufffd\ufffd recorded, not UTF-8\n+\ufffd\ufffd sent, not UTF-8" in str(caught.value)


def _binary_ok(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, content=b"ok")


def test_a_compressed_reply_is_recorded_decoded_so_its_key_is_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gzip body hides the key from every scrubber: it is kept decompressed, readable."""
    monkeypatch.setenv(cassettes.KEY_ENV, KEY)
    plain = f'{{"text": "(echo {KEY})"}}'.encode()

    def gzipped(request: httpx.Request) -> httpx.Response:
        body = gzip.compress(plain)
        return httpx.Response(200, headers={"content-encoding": "gzip"}, content=body)

    cassette = tmp_path / "rec.yaml"
    _record(cassette, gzipped, ("/v1/messages", {"q": 1}))
    (interaction,) = yaml.safe_load(cassette.read_text())["interactions"]
    response = interaction["response"]
    assert response["body"]["string"] == '{"text": "(echo ***)"}'
    assert "content-encoding" not in {name.lower() for name in response["headers"]}
    assert _send(cassette, "/v1/messages", {"q": 1}).json() == {"text": "(echo ***)"}


def test_a_replay_without_its_cassette_names_the_file_and_how_to_record_it(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "missing.yaml"
    plan = cassettes.Plan(path=missing, record=False, nodeid="tests/test_x.py::test_x")
    with pytest.raises(cassettes.NoRecordingError) as caught, cassettes.use(plan):
        pass
    assert str(caught.value) == (
        f"kimi_cassette: no cassette {missing}. Record it with a key: "
        "EVOLINK_API_KEY=... pytest --kimi-record 'tests/test_x.py::test_x'"
    )


def test_the_fixture_yields_a_cassette_named_kimi_cassette(tmp_path: Path) -> None:
    """What a test's `repr(kimi_cassette)` and its tracebacks show."""
    cassette = tmp_path / "rec.yaml"
    cassette.write_text("interactions: []\nversion: 1\n")
    plan = cassettes.Plan(path=cassette, record=False, nodeid="tests/test_x.py::test_x")
    with cassettes.use(plan) as used:
        assert type(used).__name__ == "KimiCassette"
        assert isinstance(used, cassettes._KimiCassette)
