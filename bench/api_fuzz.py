"""The API fuzzer at scale: 100,000+ random, mutated and undecodable requests to every RPC
of a real stack (the fuzzer of ``tests/support/fuzz.py``, the same one ``make test``
runs a few thousand cases of), then the table of status codes by method.

    python bench/api_fuzz.py                    # 100,000 cases over mutual TLS
    python bench/api_fuzz.py --cases 20000 --plaintext

Every INTERNAL or UNKNOWN is a bug: they are listed after the table (method, details,
caller, request bytes) and the exit status is 1. So it is if a process dies or stops
answering health checks.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' fuzzer

from arena.services.common.server import check_health
from arena.services.worker.engines.catalog import sample_catalog_path

from tests.support.fuzz import SERVICES, Fuzzer, fuzz_service, vocabulary
from tests.support.stacks import USERS, cancel_everything, launcher, security_env


def healthy(fuzzer: Fuzzer) -> list[str]:
    stack, problems = fuzzer.stack, []
    for name, process in stack.processes.items():
        if not process.alive():
            problems.append(f"{name} died:\n{process.log_tail(1500)}")
        elif not check_health(process.target, credentials=stack.client_credentials()):
            problems.append(f"{name} is not SERVING")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000, help="in all (default 100000)")
    parser.add_argument("--plaintext", action="store_true", help="no TLS")
    args = parser.parse_args()
    per_service = -(-args.cases // len(SERVICES))
    with TemporaryDirectory() as home, launcher(
            tls=not args.plaintext, home=Path(home), workers=1, analysts=1,
            engines=sample_catalog_path(), env=security_env()) as stack:
        fuzzer = Fuzzer(stack, vocabulary(stack, USERS["mallory"]), USERS["mallory"])
        started = time.monotonic()
        for service in SERVICES:
            began = time.monotonic()
            fuzz_service(fuzzer, service, per_service, stop_at_bug=False)
            print(f"{service}: {per_service} cases in {time.monotonic() - began:.0f} s",
                  flush=True)
        elapsed = time.monotonic() - started
        problems = healthy(fuzzer)
        fuzzer.close()
        cancel_everything(stack)
    total = sum(fuzzer.table.values())
    print(f"\n{total} cases in {elapsed:.0f} s ({total / elapsed:.0f}/s), "
          f"{'plaintext' if args.plaintext else 'mutual TLS'}\n")
    print(fuzzer.report())
    for finding in fuzzer.findings:
        print(f"\nBUG {finding.method} {finding.code}: {finding.details}\n"
              f"  caller {finding.token!r}, request {finding.payload.hex()}")
    for problem in problems:
        print(f"\nUNHEALTHY {problem}")
    print(f"\n{len(fuzzer.findings)} INTERNAL/UNKNOWN, "
          f"{'all processes healthy' if not problems else f'{len(problems)} unhealthy'}")
    return 1 if fuzzer.findings or problems else 0


if __name__ == "__main__":
    sys.exit(main())
