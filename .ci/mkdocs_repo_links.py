"""MkDocs hook: links from docs/ to repository files outside it (``../compat.yaml``).

They read well on GitHub, where the repository is beside the docs, but a built site holds
docs/ only. Each such link is checked against the repository (a missing target is a warning,
which ``mkdocs build --strict`` turns into a failure) and then rewritten: to the file on the
repository's web page when ``repo_url`` is set, else to the path as code.
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.repo_links")
LINK = re.compile(r"\[(?P<text>[^\]]+)\]\((?P<target>\.\./[^)#\s]*)(?P<anchor>#[^)\s]*)?\)")


def on_page_markdown(markdown, page, config, files):
    docs = Path(config["docs_dir"]).resolve()
    repo = docs.parent
    page_dir = posixpath.dirname(page.file.src_uri)
    repo_url = (config.get("repo_url") or "").rstrip("/")

    def rewrite(match):
        target = posixpath.normpath(posixpath.join("docs", page_dir, match["target"]))
        path = repo / target
        if target.startswith("..") or not path.exists():
            log.warning("%s links to '%s', which is not a file of the repository", page.file.src_uri, match["target"])
            return match[0]
        if repo_url:
            kind = "tree" if path.is_dir() else "blob"
            return f"[{match['text']}]({repo_url}/{kind}/main/{target}{match['anchor'] or ''})"
        text = match["text"]
        return text if target.rstrip("/") in text else f"{text} (`{target}`)"

    return LINK.sub(rewrite, markdown)
