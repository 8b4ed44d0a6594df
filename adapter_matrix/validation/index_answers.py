"""The index answers `validate --upstream` judges every matrix file against, read once."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from ..matrix.diagnostics import Diagnostic
from ..matrix.model import Matrix

if TYPE_CHECKING:  # the upstream package is read on first use
    from ..upstream.companion_index import CompanionIndex
    from ..upstream.history import History
    from ..upstream.index import Upstream


class IndexAnswers:
    """The index answers `validate --upstream` judges against: read once, for every matrix file.

    ``source`` is ``pypi``, a recorded folder or torch's recorded Simple JSON file."""

    def __init__(self, source: str) -> None:
        from ..upstream import index

        self.source = source
        self._index: Optional[Upstream] = None  # torch's answer: read on first use (a layer's check does not need it)
        self._own: Dict[str, Optional[History]] = {}  # the adapter's own releases, read once per distribution
        if not os.path.isdir(source):  # pypi or torch's file: read now, so a bad source fails before any output
            self._index = index.read_upstream(source)

    @property
    def index(self) -> Upstream:
        from ..upstream import index

        if self._index is None:
            self._index = index.read_upstream(self.source)
        return self._index

    @staticmethod
    def record(folder: str, matrices: Sequence[Matrix]) -> List[str]:
        """Save PyPI's answers for ``matrices`` into ``folder`` (then judge against it offline)."""
        from ..upstream import companion_index, index

        raw, _origin = index.read_answer("pypi")
        written: List[str] = []
        for matrix in matrices:
            written += companion_index.record(folder, matrix, raw)
        return written

    def own(self, matrix: Matrix) -> Optional[History]:
        from ..upstream import own

        name = matrix.adapter.distribution
        if name not in self._own:
            self._own[name] = own.read_own(self.source, matrix)
        return self._own[name]

    def findings(self, matrix: Matrix) -> Tuple[List[Diagnostic], Tuple[Dict[str, CompanionIndex], Dict[str, str]]]:
        """What the index says of ``matrix``'s torch, companion and own-release facts, and the
        companions' answers (``--write`` corrects from them)."""
        from ..upstream import companion_index, own
        from ..upstream import index as up

        found = list(up.verify(matrix, self.index))
        answers = companion_index.read_companions(self.source, matrix)
        found += companion_index.verify_companions(matrix, *answers, self.source)
        found += own.verify_own(matrix, self.own(matrix), self.source)
        return found, answers
