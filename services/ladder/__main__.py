"""Run the ladder service: `python -m arena.services.ladder --help`."""

import os

# One thread for numpy's BLAS (before numpy is imported): the service is a threaded server,
# and its fits are small. BLAS threads spinning beside the other services on a busy
# 2-core machine made a 200-bot rating list 8 times slower (bench/rating_list.py).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from arena.services.common.runner import run_service
from arena.services.ladder.server import create_service

if __name__ == "__main__":
    raise SystemExit(run_service("ladder", create_service))
