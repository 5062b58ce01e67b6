"""The adversarial set: no verdict "idempotent" where the truth is not (PTX, SASS, tables).

Verdicts on PTX and sm_90 SASS, with and without allocation tables.

Run: ``python bench/adversarial/run.py [--kernels NAME,...] [--front ptx|sass|both]``

For each kernel of labels.toml it prints the hand-labelled class and the class the analysis
gives on the committed PTX (ptx/sm_90) and on the lifted SASS (cubin/sm_90); for each
labelled launch the label, the emulator oracle's verdict on the PTX, and the launch verdict
of each front end with and without the allocation table. Then:

* class agreement on PTX and on SASS (share of kernels whose analysed class is the label);
* launch agreement (share of launches where "proved idempotent" matches the label);
* unsound verdicts: an analysed class ``always`` on a kernel labelled otherwise, or a launch
  verdict ``idempotent`` where the label or the oracle says ``not_idempotent``;
* label checks: launches where the oracle disagrees with the hand label (a labelling error
  to investigate, or contents that do not show the clobber);
* the disagreements, with the analysis' reasons.

Exits with status 1 on any unsound verdict or label-check failure.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import labelset  # noqa: E402


def main(argv=None) -> int:
    return labelset.main(HERE, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())
