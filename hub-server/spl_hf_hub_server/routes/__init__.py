"""The route table of the local Hub server: the subset of the Hub API that ``huggingface_hub`` and
``datasets`` use to create a repo, commit through the classic LFS path, and list and download files.

One module per route family (``repos``, ``refs``, ``files``, ``commits``, ``lfs``); each route is a
function ``route(handler, *url_groups)``. Responses follow the Hub's shapes and headers
(``X-Error-Code``, ``ETag``, ``X-Repo-Commit``, ``X-Linked-Etag``/``X-Linked-Size``, ``Range``) so
the unmodified clients take their usual paths.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from spl_hf_hub_server.routes import commits, files, lfs, refs, repos

_T = r"(datasets|models|spaces)"
_R = r"([^/]+)/([^/]+)"
_PREFIX = r"/(?:(datasets|spaces)/)?"
# Who may send a body to a route, checked BEFORE any of it is read: "write" needs the write token;
# "read" is checked by the route against the repo named in the URL before it reads the body;
# "signed" carries an upload signature in its query. Body caps: "json", "commit", "upload", or None.
_ROUTE_TABLE = [
    ("GET", r"^/api/whoami-v2$", repos.whoami, "read", None),
    ("POST", r"^/api/repos/create$", repos.create_repo, "write", "json"),
    ("DELETE", r"^/api/repos/delete$", repos.delete_repo, "write", "json"),
    ("POST", r"^/api/validate-yaml$", commits.validate_yaml, "read", "json"),
    ("GET", rf"^/api/{_T}$", repos.list_repos, "read", None),
    ("GET", rf"^/api/{_T}/{_R}(?:/revision/([^/]+))?$", repos.repo_info, "read", None),
    ("HEAD", rf"^/api/{_T}/{_R}(?:/revision/([^/]+))?$", repos.repo_info, "read", None),
    ("PUT", rf"^/api/{_T}/{_R}/settings$", repos.repo_settings, "write", "json"),
    ("GET", rf"^/api/{_T}/{_R}/tree/([^/]+)(?:/(.*))?$", files.tree, "read", None),
    ("GET", rf"^/api/{_T}/{_R}/refs$", refs.refs, "read", None),
    ("GET", rf"^/api/{_T}/{_R}/commits/([^/]+)$", refs.commits, "read", None),
    ("POST", rf"^/api/{_T}/{_R}/paths-info/([^/]+)$", files.paths_info, "read", "json"),
    ("POST", rf"^/api/{_T}/{_R}/preupload/([^/]+)$", commits.preupload, "write", "json"),
    ("POST", rf"^/api/{_T}/{_R}/commit/([^/]+)$", commits.commit, "write", "commit"),
    ("POST", rf"^/api/{_T}/{_R}/branch/([^/]+)$", refs.create_branch, "write", "json"),
    ("DELETE", rf"^/api/{_T}/{_R}/branch/([^/]+)$", refs.delete_branch, "write", None),
    ("POST", rf"^/api/{_T}/{_R}/tag/([^/]+)$", refs.create_tag, "write", "json"),
    ("DELETE", rf"^/api/{_T}/{_R}/tag/([^/]+)$", refs.delete_tag, "write", None),
    ("GET", rf"^/api/{_T}/{_R}/xet-(?:read|write)-token/.*$", lfs.no_xet, "read", None),
    ("GET", r"^/__xet-unsupported/.*$", lfs.no_xet_here, "read", None),
    ("POST", rf"^{_PREFIX}{_R}\.git/info/lfs/objects/batch$", lfs.lfs_batch, "read", "json"),
    ("POST", rf"^{_PREFIX}{_R}\.git/info/lfs/objects/verify$", lfs.lfs_verify, "write", "json"),
    ("PUT", rf"^/__lfs/{_T}/{_R}/([0-9a-f]{{64}})$", lfs.lfs_upload, "signed", "upload"),
    ("GET", rf"^{_PREFIX}{_R}/resolve/([^/]+)/(.+)$", files.resolve, "read", None),
    ("HEAD", rf"^{_PREFIX}{_R}/resolve/([^/]+)/(.+)$", files.resolve, "read", None),
]
ROUTES: list[tuple[str, re.Pattern, Callable[..., None], str, str | None]] = [
    (m, re.compile(p), route, a, cap) for m, p, route, a, cap in _ROUTE_TABLE
]

__all__ = ["ROUTES"]
