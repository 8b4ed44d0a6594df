"""Every bound on what the tool reads, in one place (docs/security.md).

What a matrix file may ask for: the loader rejects values outside these, and the import-time
guard re-checks its memos against them (a memo is read back from disk, so it is untrusted input
too). How much the tool reads of one file, stream or folder: a larger one is refused (or cut
short, where a prefix is enough) with a message, never read into memory whole. Readers look a
bound up here when they read (``limits.RECORD_LIMIT``), so a test can lower it.

This module imports nothing: the guard loads it inside ``import torch``, and a warm ``check``
before any other module.
"""

# -- what a matrix file may ask for
MAX_TIMEOUT = 600.0  # seconds a detector's command may run
MAX_REGEX_CHARS = 1000  # a version regex is short
MAX_AGE_DAYS = 36500  # evidence older than a century is not evidence
MAX_ALIAS_NODES = 10_000  # nodes YAML aliases may repeat (an alias bomb is rejected)

# -- bytes read from one file or stream
MAX_READ_BYTES = 16 << 20  # matrices, documents and records: real ones are a few hundred KiB
JSON_LIMIT = 64 << 20  # one JSON file of a folder: larger than any the tool writes (an op-sweep record is a few MB)
RECORD_LIMIT = 16 << 20  # one JSON file under a records folder: a result record is a few KB
EVIDENCE_BYTES = 4 << 20  # an evidence record is about 2 KB
RELEASE_FILE_BYTES = 64 << 10  # a frozen release's release.json is a few hundred bytes
CACHE_ENTRY_BYTES = 256 << 20  # one entry of the per-user cache (memo.py)
RECALLED_ANSWER_BYTES = 64 << 20  # one remembered `check` answer (check/recall.py)
DETECTOR_FILE_BYTES = 1 << 20  # a file detector reads the first MiB of its file
OUTPUT_BYTES = 1 << 20  # a command's output kept; a longer one stops the command

# -- files read from one folder or closure
MAX_SOURCE_FILES = 2000  # a package scanned for PrivateUse1 is read up to this many modules
MAX_LIBRARIES = 400  # a dependency closure larger than this is cut short, with a note
MAX_MODULES = 200  # Python files read to tell a just-in-time core from shipped sources

# -- a test pack (PyTorch's test files of a release, upstream/testpacks.py)
PACK_ARCHIVE_BYTES = 2 << 30  # a release's source archive: about 300 MB with its submodules
PACK_MEMBER_BYTES = 8 << 20  # one test file or helper: the largest of PyTorch's are about 1 MB
PACK_BYTES = 256 << 20  # what one pack reads from its archive (every .py under test/ is a few tens of MB)
PACK_MEMBERS = 200_000  # entries of one archive (PyTorch's has about 60,000)
