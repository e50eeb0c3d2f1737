"""ncu's own rule results, read from its details page (`ncu --import R --csv --page details
--print-details all`): each rule that fired on a kernel, its words and the speedup it estimates
for fixing what it found ("global": of the whole kernel's time; "local": of the part it looked at).

The profile's one fix (one_fix.py) is the highest estimate that applies to this kernel: global
estimates first (comparable with each other), then local ones. A rule that asks for tensor cores
does not apply to a kernel that does no matrix product (cockpit/analysis/roofline.py). Measured on
an H100 on the held-out Triton layer norm: ncu estimated 25 % (global) for the partial last wave,
33 % (local) for L1TEX scoreboard stalls, 11 % for achieved occupancy and 0.44 % for compute,
where the decision tree alone had said "use tensor cores".
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

TENSOR_WORDS = re.compile(r"tensor core|\bmma\b|wgmma|hmma|matrix multipl", re.IGNORECASE)
COLUMNS = ("Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup")


@dataclass(frozen=True)
class RuleResult:
    """One rule that fired on one kernel launch."""

    launch: str
    """ncu's launch ID."""
    kernel: str
    name: str
    kind: str
    """ncu's rule type: OPT (an optimization), WRN, INF, ERR."""
    description: str
    speedup_type: str
    """"global" or "local"."""
    speedup: float | None
    """Estimated speedup, percent."""

    @property
    def gist(self) -> str:
        """The first sentence, the one that names the cause when ncu gives one ("… is limited by
        the number of required registers") and the first that says what to do ("To reduce the
        number of cycles waiting on L1TEX data accesses verify the memory access patterns …"):
        what the engineer acts on."""
        first, *rest = _sentences(self.description)
        cause = next((s for s in rest if _CAUSE.search(s)), "")
        remedy = next((s for s in rest if _REMEDY.match(s) and s != cause), "")
        return " ".join(part for part in (first, cause, remedy) if part)

    def line(self) -> str:
        """'Tail Effect: <its first sentence> [<the cause>] (25 % est., of the whole kernel)'."""
        scope = "of the whole kernel" if self.speedup_type.lower() == "global" else "of the part it measured"
        est = f" ({self.speedup:.3g} % est., {scope})" if self.speedup is not None else ""
        return f"{self.name}: {self.gist}{est}"

    def as_json(self) -> dict[str, object]:
        return {"launch": self.launch, "kernel": self.kernel, "name": self.name, "kind": self.kind,
                "description": self.description, "speedup_type": self.speedup_type,
                "speedup": self.speedup, "line": self.line()}


_CAUSE = re.compile(r"\b(limited by|caused by|due to|because)\b", re.IGNORECASE)
_REMEDY = re.compile(r"(To (reduce|improve|increase|avoid|speed)|Consider|Try|Reduce|Increase|Avoid|Use)\b")


def _sentences(text: str) -> list[str]:
    """ncu's description in sentences (a decimal point like "56.2%" does not end one)."""
    return re.split(r"(?<=[.!?])\s+", " ".join(text.split())) or [""]


def is_details_page(text: str) -> bool:
    """Whether an ncu CSV is its details page (one row per section metric, under "Section Name" and
    "Metric Name" columns), not the raw page (one row per launch) the bottleneck verdict reads."""
    return any("Section Name" in line and "Metric Name" in line for line in text.splitlines())


class NoRules(ValueError):
    """The details page holds no rule columns (an older ncu, or not a details page)."""


def parse_rules(text: str) -> list[RuleResult]:
    """Every rule result on the details page, once per launch, rule and finding. NoRules when the page has
    no rule columns; garbage before the header (ncu's ==PROF== lines) is skipped."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if '"Rule Name"' in line or line.startswith("Rule Name")
                  or ",Rule Name," in line), None)
    if start is None:
        raise NoRules("ncu's details page has no rule results (an ncu older than 2023.2, or not "
                      "--print-details all)")
    found: dict[tuple[str, str, str, str], RuleResult] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        name = (row.get("Rule Name") or "").strip()
        if not name:
            continue
        launch = (row.get("ID") or "").strip()
        # One rule may fire twice on a launch (CPIStall: a WRN that a metric is missing, then the
        # OPT with its 38 % estimate on a Liger-style softmax): each is its own result. The page
        # repeats every rule on each of its section's metric rows; those collapse.
        kind, description = (row.get("Rule Type") or "").strip(), (row.get("Rule Description") or "").strip()
        key = (launch, name, kind, description)
        if key not in found:
            found[key] = RuleResult(launch, (row.get("Kernel Name") or "").strip(), name, kind, description,
                                    (row.get("Estimated Speedup Type") or "").strip(),
                                    _percent(row.get("Estimated Speedup")))
    return list(found.values())


def ranked(rules: list[RuleResult], matrix_math: bool | None) -> list[RuleResult]:
    """The rules with an estimate that apply to this kernel, best first: global estimates before
    local ones, each by its estimate; a tensor-core rule only for a kernel that does matrix math."""
    fits = [r for r in rules if r.speedup is not None and r.speedup > 0
            and (matrix_math or not TENSOR_WORDS.search(f"{r.name} {r.description}"))]
    return sorted(fits, key=lambda r: (r.speedup_type.lower() == "global", r.speedup or 0.0), reverse=True)


def _percent(value: object) -> float | None:
    text = str(value or "").replace(",", "").replace("%", "").strip()
    try:
        return float(text)
    except ValueError:
        return None
