"""python/build.py: versions, tags, and the wheel's bytes (run from the
checkout, where build.py is; the wheel under test elsewhere is the one
installed)."""

import base64
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Dict, List

import pytest

BUILD_PY = Path(__file__).resolve().parent.parent / "build.py"
spec = importlib.util.spec_from_file_location("build", str(BUILD_PY))
assert spec is not None and spec.loader is not None
build: Any = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)

SIX = [(goos, goarch) for goos in ("linux", "darwin", "windows") for goarch in ("amd64", "arm64")]


@pytest.mark.parametrize(
    "given, want",
    [
        ("v1.2.3", "1.2.3"),
        ("1.2.3", "1.2.3"),
        ("v01.02.003", "1.2.3"),
        ("1.2.4-snapshot.abc1234", "1.2.4.dev0+abc1234"),
        ("0.0.1-snapshot.ABC1234", "0.0.1.dev0+abc1234"),
        ("v1.3.0-rc.1", "1.3.0rc1"),
        ("1.3.0-beta.2", "1.3.0b2"),
        ("1.3.0-alpha1", "1.3.0a1"),
        ("0.0.0.dev0", "0.0.0.dev0"),
        ("2.0.0.post1", "2.0.0.post1"),
    ],
)
def test_release_versions_become_pep440(given: str, want: str) -> None:
    assert build.wheel_version(given) == want


@pytest.mark.parametrize("given", ["", "latest", "v1.2", "1.2.3-weird.thing", "1.2.3 ", "v1.2.3+meta"])
def test_a_version_without_a_pep440_form_is_refused(given: str) -> None:
    with pytest.raises(ValueError, match="neither a release's"):
        build.wheel_version(given)


@pytest.fixture(scope="module")
def binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bin") / "resourcedir"
    path.write_bytes(b"\x7fELF not really a binary\n")
    return path


@pytest.fixture(scope="module")
def six(binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    out = tmp_path_factory.mktemp("six")
    return {"{}/{}".format(*p): Path(build.build_wheel(str(binary), p[0], p[1], "v1.2.3", str(out))) for p in SIX}


def entries(wheel: Path) -> Dict[str, bytes]:
    with zipfile.ZipFile(str(wheel)) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


@pytest.mark.parametrize("platform", ["{}/{}".format(*p) for p in SIX])
def test_each_platforms_wheel(platform: str, six: Dict[str, Path], binary: Path) -> None:
    wheel = six[platform]
    tags = build.PLATFORM_TAGS[tuple(platform.split("/"))]
    assert wheel.name == "resourcedir-1.2.3-py3-none-{}.whl".format(".".join(tags))
    files = entries(wheel)
    exe = "resourcedir/bin/resourcedir" + (".exe" if platform.startswith("windows") else "")
    assert files[exe] == binary.read_bytes()

    info = "resourcedir-1.2.3.dist-info/"
    metadata = files[info + "METADATA"].decode()
    headers = metadata.split("\n\n", 1)[0].splitlines()
    assert headers[:3] == ["Metadata-Version: 2.1", "Name: resourcedir", "Version: 1.2.3"]
    assert "Requires-Python: >=3.9" in headers and "License: Apache-2.0" in headers
    assert "Requires-Dist" not in metadata  # the standard library alone
    assert files[info + "WHEEL"].decode().splitlines() == [
        "Wheel-Version: 1.0",
        "Generator: resourcedir python/build.py",
        "Root-Is-Purelib: false",
    ] + ["Tag: py3-none-" + tag for tag in tags]
    assert "[pytest11]\nresourcedir = resourcedir.pytest_plugin\n" in files[info + "entry_points.txt"].decode()
    assert "[console_scripts]\nresourcedir = resourcedir._binary:main\n" in files[info + "entry_points.txt"].decode()
    assert "resourcedir/py.typed" in files and "resourcedir/pytest_plugin.py" in files

    # RECORD: every other file with its sha256 and size, then itself.
    record = [line.split(",") for line in files[info + "RECORD"].decode().splitlines()]
    assert record[-1] == [info + "RECORD", "", ""]
    listed = {path: (digest, int(size)) for path, digest, size in record[:-1]}
    assert set(listed) == set(files) - {info + "RECORD"}
    for path, (digest, size) in listed.items():
        want = base64.urlsafe_b64encode(hashlib.sha256(files[path]).digest()).rstrip(b"=").decode()
        assert (digest, size) == ("sha256=" + want, len(files[path])), path

    with zipfile.ZipFile(str(wheel)) as zf:
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
    assert modes[exe] == 0o100755
    assert {m for name, m in modes.items() if name != exe} == {0o100644}


def test_the_same_inputs_give_the_same_bytes(binary: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    one = Path(build.build_wheel(str(binary), "linux", "amd64", "1.2.3", str(tmp_path / "one")))
    two = Path(build.build_wheel(str(binary), "linux", "amd64", "1.2.3", str(tmp_path / "two")))
    assert one.read_bytes() == two.read_bytes()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    dated = Path(build.build_wheel(str(binary), "linux", "amd64", "1.2.3", str(tmp_path / "dated")))
    with zipfile.ZipFile(str(dated)) as zf:
        assert {i.date_time for i in zf.infolist()} == {(2023, 11, 14, 22, 13, 20)}


def test_the_command_line(binary: Path, tmp_path: Path) -> None:
    def run(*args: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run(
            [sys.executable, str(BUILD_PY)] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            universal_newlines=True, timeout=60,
        )

    made = run("--binary", str(binary), "--goos", "darwin", "--goarch", "arm64", "--version", "1.2.4-snapshot.abc1234",
               "--out", str(tmp_path))
    assert made.returncode == 0, made.stderr
    assert made.stdout == str(tmp_path / "resourcedir-1.2.4.dev0+abc1234-py3-none-macosx_12_0_arm64.whl") + "\n"

    unknown = run("--binary", str(binary), "--goos", "plan9", "--goarch", "amd64", "--out", str(tmp_path))
    assert unknown.returncode == 1 and "no wheel is made for plan9/amd64" in unknown.stderr
    half = run("--binary", str(binary), "--goos", "linux")
    assert half.returncode == 2 and "--binary needs --goos and --goarch" in half.stderr


# What pip on each platform accepts, as its own tags for that platform
# say: pip expands macOS versions itself; for Linux the tags are those a
# pip on such a system lists (glibc x86-64 is this machine's: CI installs
# the wheel natively there).
ACCEPTED = {
    "linux/amd64": ["musllinux_1_2_x86_64", "musllinux_1_1_x86_64"],
    "linux/arm64": ["manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64"],
    "darwin/amd64": ["macosx_14_0_x86_64"],
    "darwin/arm64": ["macosx_15_0_arm64"],
    "windows/amd64": ["win_amd64"],
    "windows/arm64": ["win_arm64"],
}


def pip_picks(folder: Path, platforms: List[str], target: Path) -> Any:
    args = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(folder),
            "--only-binary=:all:", "--python-version", "3.9", "--dry-run", "--no-cache-dir",
            "--disable-pip-version-check", "--target", str(target),
            "--report", "-", "resourcedir"]
    for platform in platforms:
        args[4:4] = ["--platform", platform]
    done = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if done.returncode != 0:
        return None
    return [os.path.basename(i["download_info"]["url"]) for i in json.loads(done.stdout)["install"]]


@pytest.mark.parametrize("platform", sorted(ACCEPTED))
def test_pip_picks_each_platforms_wheel(platform: str, six: Dict[str, Path], tmp_path: Path) -> None:
    folder = next(iter(six.values())).parent
    assert pip_picks(folder, ACCEPTED[platform], tmp_path) == [six[platform].name]


def test_pip_refuses_a_macos_older_than_go_supports(six: Dict[str, Path], tmp_path: Path) -> None:
    folder = next(iter(six.values())).parent
    assert pip_picks(folder, ["macosx_11_0_arm64"], tmp_path) is None


def test_the_sources_are_python_3_9() -> None:
    """Python 3.9's grammar (the package supports it; CI has 3.11): a
    newer construct fails here rather than on a user's 3.9."""
    import ast

    python = BUILD_PY.parent
    sources = sorted(python.glob("src/resourcedir/*.py")) + sorted(python.glob("*.py")) + sorted(python.glob("*/*.py"))
    assert len(sources) > 10
    for source in sources:
        ast.parse(source.read_text(encoding="utf-8"), str(source), feature_version=(3, 9))
