"""Generate the Python modules for proto/arena/v1 into arena/v1 (or check for drift).

    python tools/protogen.py          # regenerate arena/v1
    python tools/protogen.py --check  # fail if arena/v1 differs from what the protos give

The generated modules are committed so that a plain install needs no code generator;
`make test` runs the check so they can never drift from the .proto files.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import sysconfig
import tempfile
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
OUT_PACKAGE = Path("arena") / "v1"


def _plugin(name: str) -> str:
    scripts = Path(sysconfig.get_path("scripts"))
    path = scripts / name
    if not path.exists():
        sys.exit(f"protogen: {name} not found in {scripts} (install the dev extras)")
    return f"--plugin={name}={path}"


def generate(out_dir: Path) -> None:
    sources = (PROTO_ROOT / OUT_PACKAGE).glob("*.proto")
    protos = sorted(str(p.relative_to(PROTO_ROOT)) for p in sources)
    include = str(resources.files("grpc_tools") / "_proto")
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        _plugin("protoc-gen-mypy"),
        _plugin("protoc-gen-mypy_grpc"),
        f"--python_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        f"--mypy_out=quiet:{out_dir}",
        f"--mypy_grpc_out=quiet:{out_dir}",
        *protos,
    ]
    if protoc.main(args) != 0:
        sys.exit("protogen: protoc failed")
    package = out_dir / OUT_PACKAGE
    init = '"""Generated from proto/arena/v1 by tools/protogen.py; never edit by hand."""\n'
    (package / "__init__.py").write_text(init)
    (package / "py.typed").write_text("")


def check() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        generate(fresh)
        fresh_pkg, committed = fresh / OUT_PACKAGE, ROOT / OUT_PACKAGE
        names = {p.name for p in fresh_pkg.iterdir()} | {
            p.name for p in committed.iterdir() if p.is_file()
        }
        drift = sorted(
            n for n in names
            if not (fresh_pkg / n).exists() or not (committed / n).exists()
            or not filecmp.cmp(fresh_pkg / n, committed / n, shallow=False)
        )
    if drift:
        print("protogen: arena/v1 is out of date with proto/ for: " + ", ".join(drift))
        print("protogen: run `make protos` and commit the result")
        return 1
    print("protogen: arena/v1 matches proto/")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check for drift")
    if parser.parse_args().check:
        return check()
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        target = ROOT / OUT_PACKAGE
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(Path(tmp) / OUT_PACKAGE, target)
    print(f"protogen: wrote {OUT_PACKAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
