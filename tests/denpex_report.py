"""What the real-run tests read from Denpex: the CLI's JSON report, its exit code and the API's Diagnosis."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Report:
    rc: int
    data: dict
    api: object = field(repr=False)

    @property
    def verdict(self) -> str:
        return self.data["verdict"]

    @property
    def root(self) -> dict:
        return self.data["root_cause"] or {}

    @property
    def category(self) -> str | None:
        return self.root.get("category")

    @property
    def rank(self) -> int | None:
        return self.root.get("rank")

    @property
    def evidence(self) -> dict:
        return self.root.get("evidence") or {}

    @property
    def evidence_text(self) -> str:
        return self.evidence.get("text", "")

    def categories(self) -> set[str]:
        return {f["category"] for f in self.data["findings"]}

    def findings(self, finding_id: str | None = None) -> list[dict]:
        return [f for f in self.data["findings"] if finding_id in (None, f["id"])]

    def summary(self) -> str:
        ev = self.evidence
        return (
            f"verdict={self.verdict} rc={self.rc} root={self.root.get('id')} ({self.category}) rank={self.rank} "
            f"rank_reason={self.root.get('rank_reason')!r} evidence {ev.get('file')}:{ev.get('line')}: "
            f"{ev.get('text')!r}; findings={[(f['id'], f['role'], f['rank'], f['ranks']) for f in self.findings()]}"
        )
