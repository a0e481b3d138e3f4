"""`make helm-lint`: lint the chart in strict mode with the real Helm engine (helm-python-sdk)
and check that its generated files (crds/ and files/rbac-rules.yaml) are in step with the
code (`asyncop generate --check`, from the repository root).

Exit status 0 when clean; the findings are printed one per line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHART = Path(__file__).resolve().parents[1]
ROOT = CHART.parents[1]


def main() -> int:
    import helm_python

    result = helm_python.lint(str(CHART), strict=True)
    for message in result.get("messages") or []:
        print(f"lint: {message}")
    for error in result.get("errors") or []:
        print(f"lint error: {error}")
    drift = subprocess.run([sys.executable, "-m", "asyncop", "generate", "--check"], cwd=ROOT,
                           check=False).returncode
    ok = not result.get("errors") and drift == 0
    print("helm-lint: ok" if ok else "helm-lint: FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
