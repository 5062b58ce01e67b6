"""Progress bars: drawn on a terminal (a pseudo-terminal here), with time left; never in a
pipe or a CI log, and not with --quiet."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys


def _stderr_on_a_terminal(argv: list[str], cwd) -> tuple[int, str]:
    master, slave = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "kernelcheck", *argv], cwd=cwd,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    process.wait(timeout=120)
    os.close(master)
    return process.returncode, b"".join(chunks).decode("utf-8", "replace")


CAMPAIGN = ["inject", "saxpy", "--trials", "150", "--recover", "--no-figure", "-o", "c"]


def test_a_campaign_on_a_terminal_shows_progress_with_time_left(tmp_path):
    status, err = _stderr_on_a_terminal(CAMPAIGN, tmp_path)
    assert status == 0, err
    assert "/150" in err and "trials" in err
    assert "<00:" in err  # tqdm's time left
    assert "\r" in err


def test_quiet_and_pipes_get_no_bar(tmp_path):
    status, err = _stderr_on_a_terminal([*CAMPAIGN, "--quiet"], tmp_path)
    assert status == 0 and "/150" not in err
    done = subprocess.run([sys.executable, "-m", "kernelcheck", *CAMPAIGN], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "/150" not in done.stderr and "\r" not in done.stderr


def test_a_library_analysis_on_a_terminal_counts_images(tmp_path):
    from tests.conftest import FIXTURES

    status, err = _stderr_on_a_terminal(
        ["analyze", str(FIXTURES / "exe" / "vec_add_host"), "--format", "jsonl", "-o",
         "k.jsonl"], tmp_path)
    assert status == 0, err
    # The bar counts the bytes of device code (the time left follows the work), and says
    # how many of the images are done.
    assert "4/4 images" in err and "B/s" in err and "<00:" in err
