#!/usr/bin/env python3
"""Builds the resourcedir wheel of one platform: the package in src/ with
the Go binary in resourcedir/bin/, which the package runs in place.

    python3 python/build.py
        go build -trimpath of ./cmd/resourcedir (CGO_ENABLED=0) for this
        machine, and its wheel in python/dist/.
    python3 python/build.py --binary PATH --goos GOOS --goarch GOARCH \\
            --version VERSION --out DIR
        the wheel of a binary built elsewhere (the release's six, from
        goreleaser), stamped with the release's version.

Standard library only, so that it runs wherever Python does. The same
inputs give the same bytes (SOURCE_DATE_EPOCH, when set, dates the
entries; otherwise they are dated 1980-01-01).
"""

import argparse
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from typing import List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
NAME = "resourcedir"
SUMMARY = "A local, in-memory test double of the Resource Directory REST API, with a pytest plugin"
DEFAULT_VERSION = "0.0.0.dev0"

# The platform tags each binary's wheel carries, for pip to pick it. The
# Linux binary is static (CGO_ENABLED=0), so it runs on glibc and musl
# systems alike: manylinux2014 (glibc 2.17) is as old as pip's tags go,
# musllinux_1_1 likewise. Go 1.26 needs macOS 12 or newer.
PLATFORM_TAGS = {
    ("linux", "amd64"): ["manylinux_2_17_x86_64", "manylinux2014_x86_64", "musllinux_1_1_x86_64"],
    ("linux", "arm64"): ["manylinux_2_17_aarch64", "manylinux2014_aarch64", "musllinux_1_1_aarch64"],
    ("darwin", "amd64"): ["macosx_12_0_x86_64"],
    ("darwin", "arm64"): ["macosx_12_0_arm64"],
    ("windows", "amd64"): ["win_amd64"],
    ("windows", "arm64"): ["win_arm64"],
}

_PEP440 = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[a-z0-9]+(\.[a-z0-9]+)*)?")
_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "rc": "rc"}


def wheel_version(version: str) -> str:
    """The PEP 440 version of a release's: v1.2.3 and 1.2.3 are 1.2.3;
    goreleaser's snapshots, 1.2.4-snapshot.abc1234, are 1.2.4.dev0+abc1234
    (a development release with the commit as its local part); 1.2.3-rc.1
    is 1.2.3rc1. A PEP 440 version is kept as it is."""
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?", version)
    if m:
        base = ".".join(str(int(part)) for part in m.group(1, 2, 3))
        extra = m.group(4)
        if extra is None:
            return base
        snapshot = re.fullmatch(r"snapshot\.([0-9A-Za-z]+)", extra)
        if snapshot:
            return "{}.dev0+{}".format(base, snapshot.group(1).lower())
        pre = re.fullmatch(r"(alpha|beta|rc|a|b)\.?(\d+)", extra, re.IGNORECASE)
        if pre:
            return "{}{}{}".format(base, _PRE[pre.group(1).lower()], int(pre.group(2)))
    if _PEP440.fullmatch(version):
        return version
    raise ValueError(
        "version {!r} is neither a release's (v1.2.3, 1.2.3-rc.1, 1.2.4-snapshot.abc1234) nor a PEP 440 one".format(
            version
        )
    )


def _date() -> Tuple[int, int, int, int, int, int]:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return (1980, 1, 1, 0, 0, 0)
    t = time.gmtime(max(int(epoch), 315532800))  # a zip cannot date before 1980
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _package_files() -> List[Tuple[str, bytes]]:
    src = os.path.join(HERE, "src", NAME)
    files = []
    for name in sorted(os.listdir(src)):
        if name.endswith(".py") or name == "py.typed":
            files.append(("{}/{}".format(NAME, name), _read(os.path.join(src, name))))
    return files


def _metadata(version: str) -> bytes:
    readme = _read(os.path.join(HERE, "README.md")).decode("utf-8")
    headers = [
        ("Metadata-Version", "2.1"),
        ("Name", NAME),
        ("Version", version),
        ("Summary", SUMMARY),
        ("Home-page", "https://github.com/resourcedir/resourcedir"),
        ("License", "Apache-2.0"),
        ("Project-URL", "Source, https://github.com/resourcedir/resourcedir"),
        ("Project-URL", "Documentation, https://github.com/resourcedir/resourcedir/blob/main/docs/python.md"),
        ("Classifier", "Framework :: Pytest"),
        ("Classifier", "License :: OSI Approved :: Apache Software License"),
        ("Classifier", "Programming Language :: Python :: 3"),
        ("Classifier", "Topic :: Software Development :: Testing :: Mocking"),
        ("Classifier", "Typing :: Typed"),
        ("Requires-Python", ">=3.9"),
        ("Description-Content-Type", "text/markdown"),
    ]
    text = "".join("{}: {}\n".format(k, v) for k, v in headers) + "\n" + readme
    return text.encode("utf-8")


def build_wheel(binary: str, goos: str, goarch: str, version: str, out: str) -> str:
    """Writes the wheel of binary (built for goos/goarch) into out and
    returns its path."""
    tags = PLATFORM_TAGS.get((goos, goarch))
    if tags is None:
        known = ", ".join("{}/{}".format(*k) for k in sorted(PLATFORM_TAGS))
        raise ValueError("no wheel is made for {}/{}: the platforms are {}".format(goos, goarch, known))
    version = wheel_version(version)
    exe = "resourcedir.exe" if goos == "windows" else "resourcedir"
    dist_info = "{}-{}.dist-info".format(NAME, version)
    wheel = "".join("Tag: py3-none-{}\n".format(tag) for tag in tags)
    files = _package_files() + [("{}/bin/{}".format(NAME, exe), _read(binary))]
    files += [
        (dist_info + "/METADATA", _metadata(version)),
        (
            dist_info + "/WHEEL",
            ("Wheel-Version: 1.0\nGenerator: resourcedir python/build.py\nRoot-Is-Purelib: false\n" + wheel).encode(),
        ),
        (
            dist_info + "/entry_points.txt",
            b"[console_scripts]\nresourcedir = resourcedir._binary:main\n\n"
            b"[pytest11]\nresourcedir = resourcedir.pytest_plugin\n",
        ),
        (dist_info + "/top_level.txt", b"resourcedir\n"),
        (dist_info + "/LICENSE", _read(os.path.join(REPO, "LICENSE"))),
    ]
    record = "".join("{},{},{}\n".format(path, _record_hash(data), len(data)) for path, data in files)
    record += dist_info + "/RECORD,,\n"
    files.append((dist_info + "/RECORD", record.encode()))

    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "{}-{}-py3-none-{}.whl".format(NAME, version, ".".join(tags)))
    date = _date()
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w") as zf:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=date)
            info.create_system = 3  # Unix: pip reads the mode from external_attr
            executable = name.endswith("/bin/" + exe)
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data, compresslevel=6)
    os.replace(tmp, path)
    return path


def _go_env(*names: str) -> List[str]:
    out = subprocess.run(["go", "env"] + list(names), check=True, stdout=subprocess.PIPE, cwd=REPO)
    return out.stdout.decode().split()


def build_here(version: str, out: str) -> str:
    """go build of this checkout for this machine, and its wheel."""
    goos, goarch = _go_env("GOOS", "GOARCH")
    folder = tempfile.mkdtemp(prefix="resourcedir-wheel-")
    try:
        binary = os.path.join(folder, "resourcedir.exe" if goos == "windows" else "resourcedir")
        env = dict(os.environ, CGO_ENABLED="0")
        subprocess.run(["go", "build", "-trimpath", "-o", binary, "./cmd/resourcedir"], check=True, cwd=REPO, env=env)
        return build_wheel(binary, goos, goarch, version, out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", help="a resourcedir binary built elsewhere (default: go build this checkout)")
    parser.add_argument("--goos", help="the GOOS the binary is for (linux, darwin, windows)")
    parser.add_argument("--goarch", help="the GOARCH the binary is for (amd64, arm64)")
    parser.add_argument("--version", default=DEFAULT_VERSION, help="the release's version (default %(default)s)")
    parser.add_argument("--out", default=os.path.join(HERE, "dist"), help="folder for the wheel (default python/dist)")
    args = parser.parse_args(argv)
    try:
        if args.binary:
            if not args.goos or not args.goarch:
                parser.error("--binary needs --goos and --goarch")
            path = build_wheel(args.binary, args.goos, args.goarch, args.version, args.out)
        else:
            if args.goos or args.goarch:
                parser.error("--goos and --goarch describe a --binary; without one, this machine's is built")
            path = build_here(args.version, args.out)
    except (ValueError, OSError, subprocess.CalledProcessError) as err:
        print("build.py: {}".format(err), file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
