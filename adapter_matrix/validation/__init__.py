"""`validate`'s pipeline: every finding about one matrix file, and `--write`'s corrections.

The command line parses the options, calls :func:`.matrixfile.validate_file` (or
:func:`.matrixfile.write_facts`, :func:`.layerfile.validate_layer` for a layer's matrix) per file
and prints the typed result it gets back; nothing here prints or exits. A finding is a
:class:`~adapter_matrix.matrix.diagnostics.Diagnostic` at its line, from the schema and
consistency rules, the project's ``pyproject.toml``, the index (torch's facts, the companions',
the adapter's own releases, a layer's wheels) and the evidence folder (the release gate).

It joins two spokes, ``upstream`` (the index) and ``ci`` (records and frozen releases), so it
sits outside them, as ``tables`` and ``binary`` do. Its modules: :mod:`.index_answers` (what the
index answers, read once), :mod:`.matrixfile` (an adapter's matrix), :mod:`.layerfile` (a layer's).
"""
