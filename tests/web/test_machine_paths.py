"""Any absolute path of the machine in a text a person or a program reads: a page, a report, a
command's output. Not a list of a few folders (the repository, the temporary folder) that misses
the next one (``../shared`` beside the checkout, HOME, site-packages): every ``/<top>/…`` whose
``<top>`` is a folder at the root of this machine, and the known folders besides."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _tops() -> list[str]:
    return sorted(entry.name for entry in Path("/").iterdir() if entry.is_dir() and not entry.name.startswith("."))


# a path starts a word (not the path part of a URL http://host/ops/…: its slash follows the host)
_PATH = re.compile(r"(?<![\w.:%-])/(?:" + "|".join(map(re.escape, _tops())) + r")(?:/[\w.@+~-]+)+")


def known_folders() -> set[str]:
    """The folders a leak is most likely to name, spelled out (each also an absolute path)."""
    folders = {str(REPO), str(REPO.resolve()), sys.prefix, tempfile.gettempdir(), str(REPO.parent / "shared"),
               os.environ.get("OPGOV_SHARED_DIR", "")}
    home = os.environ.get("HOME", "")
    return {f for f in folders | {home} if f and f != "/"}


def machine_paths(text: str) -> list[str]:
    """The absolute paths of this machine ``text`` names (empty: none)."""
    found = set(_PATH.findall(text))
    found |= {folder for folder in known_folders() if folder in text}
    return sorted(found)


def test_it_finds_any_folder_of_the_machine():
    """The finder itself: the folders of a test run, wherever they are, and no URL path."""
    for path in (str(REPO / "tests" / "data" / "models"), "/work/shared/models", tempfile.gettempdir() + "/x/y",
                 str(Path.home() / ".cache"), sys.prefix + "/lib"):
        if Path(path.split("/")[1] and "/" + path.split("/")[1]).is_dir():
            assert machine_paths(f'{{"models_source": "{path}"}}'), path
    assert machine_paths("file:///tmp/site/index.html")
    assert not machine_paths('<a href="/ops/aten::add.Tensor">x</a> http://127.0.0.1:8000/opset /api/v1/queue')


# --- no page, site file or output names a folder of the machine -----------------------------------

import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402

import httpx  # noqa: E402
import pytest  # noqa: E402

SAMPLE = REPO / "data" / "sample"
OPGOV = [sys.executable, "-m", "opgov"]


def opgov(db: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([*OPGOV, "--db", db, "--actor", "setup", *args], capture_output=True, text=True, timeout=120,
                          env={**{k: v for k, v in os.environ.items() if not k.startswith("OPGOV_")}, **(env or {})})
    assert done.returncode == 0, f"opgov {' '.join(args)}: {done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory) -> tuple[str, Path]:
    """(a database holding the sample registry, a copy of the corpora in an absolute folder)."""
    where = tmp_path_factory.mktemp("paths")
    db = f"sqlite:///{where / 'opgov.db'}"
    opgov(db, "db", "upgrade")
    opgov(db, "import", str(SAMPLE / "native_functions.v2.yaml"), "--tags-yaml", str(SAMPLE / "tags.yaml"),
          "--label", "v2")
    corpora = where / "shared" / "models"
    shutil.copytree(REPO / "data" / "models", corpora)
    return db, corpora


@pytest.mark.parametrize("how", ["--models", "OPGOV_MODELS_DIR", "shipped"])
def test_no_file_of_the_static_site_names_a_folder_of_the_machine(sample_db, tmp_path, how):
    """The opset page embedded ``models_source`` as the corpus's absolute path (issue 43); the
    shipped corpora (the default) would name site-packages."""
    db, corpora = sample_db
    site = tmp_path / "site"
    args, env = (["--models", str(corpora)], {}) if how == "--models" else ([], {"OPGOV_MODELS_DIR": str(corpora)}) \
        if how == "OPGOV_MODELS_DIR" else ([], {})
    opgov(db, "site", "build", str(site), "--ops", "aten::add*", *args, env=env)
    files = [p for p in site.rglob("*") if p.is_file()]
    assert len(files) > 5
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not machine_paths(text), f"{path.relative_to(site)} names {machine_paths(text)}"
    opset = (site / "opset.html").read_text(encoding="utf-8")
    assert "of 43 models covered" in opset  # the corpus is there, by its name
    assert ("opgov's shipped corpora (torchvision, transformers)" in opset) == (how == "shipped")


def test_no_served_page_or_answer_names_a_folder_of_the_machine(sample_db):
    from tests.api.test_api_serve import start

    db, corpora = sample_db
    server = start(db, env={"OPGOV_MODELS_DIR": str(corpora)})
    try:
        for path in ("/", "/opset", "/ops", "/ops/aten::add.Tensor", "/queue", "/report", "/api/v1/pages/opset",
                     "/api/v1/pages/ops/aten::add.Tensor", "/api/v1/queue", "/api/v1/runtimes/coverage"):
            answer = httpx.get(server.url + path, timeout=60)
            assert answer.status_code == 200, (path, answer.text[:300])
            assert not machine_paths(answer.text), f"{path} names {machine_paths(answer.text)}"
        assert httpx.get(server.url + "/api/v1/pages/opset", timeout=60).json()["models_source"] == \
            "models (torchvision, transformers)"  # the folder by its name
    finally:
        server.stop()


def test_the_queue_names_its_corpus_without_a_folder(sample_db):
    db, corpora = sample_db
    for env, named in (({}, "opgov's shipped corpora (torchvision, transformers)"),
                       ({"OPGOV_MODELS_DIR": str(corpora)}, "models (torchvision, transformers)")):
        out = opgov(db, "queue", "--format", "json", env=env)
        assert not machine_paths(out), machine_paths(out)
        assert json.loads(out)["models"] == named  # the shipped corpora are the default evidence


def test_an_operator_page_says_whether_a_corpus_is_configured(sample_db, tmp_path):
    """"None of the corpus's models" was said with no corpus at all (issue 43); the shipped corpora
    are the default evidence, OPGOV_MODELS_DIR=none turns them off."""
    db, _ = sample_db
    for env, add, trilinear in (({}, "resnet18", "None of the corpus's 43 models."),
                                ({"OPGOV_MODELS_DIR": "none"}, "No model corpus configured", "No model corpus configured")):
        site = tmp_path / env.get("OPGOV_MODELS_DIR", "default")
        opgov(db, "site", "build", str(site), "--ops", "aten::add.Tensor", "--ops", "aten::_trilinear", env=env)
        assert add in (site / "ops" / "aten.add.Tensor.html").read_text(encoding="utf-8")
        assert trilinear in (site / "ops" / "aten._trilinear.html").read_text(encoding="utf-8")
