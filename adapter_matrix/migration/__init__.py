"""``adapter-matrix migrate torch X.Y.Z``: the first step of supporting a new torch release.

An outer part like ``validation/``: it joins ``upstream`` (the index's facts, the torch
section's writer) and ``device`` (the API probe, the shim skeleton), which never import each
other. :mod:`.torch_release` holds the use case (a frozen :class:`MigrateRequest`,
:func:`run`, a typed :class:`MigrateResult` and its renderers); :mod:`.pending` lists the
torch releases an index has that a matrix does not describe yet (what the scheduled workflow
migrates); ``cli/`` only parses and prints.
"""
