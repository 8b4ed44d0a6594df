"""The sha256 of each torch release's source archive the tool describes: the pins of the test
packs (:mod:`.testpacks`, docs/op-coverage.md "Test packs").

An entry is added only for an archive a maintainer downloaded and checked (its digest against
the one GitHub shows for the release asset, from two downloads): never a guessed or copied
hash. A release missing here is refused by ``adapter-matrix ops pack`` with how to add it; a
user passes the digest they checked with ``--sha256`` meanwhile. The maintainer command, from a
source checkout::

    python -m adapter_matrix.upstream.testpacks add 2.13.0 pytorch-v2.13.0.tar.gz

hashes the archive, checks that it unpacks as a pack (every member inside its root), and
writes the entry between the markers below (atomically, nothing else of this file changes).
"""

from __future__ import annotations

from typing import Dict

__all__ = ["SHA256", "BEGIN", "END"]

# adapter-matrix:pack-table
SHA256: Dict[str, str] = {}
# /adapter-matrix:pack-table

BEGIN = "# adapter-matrix:pack-table\n"
END = "# /adapter-matrix:pack-table\n"
