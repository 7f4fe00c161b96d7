"""`spl-hf publish`: audit a built dataset folder and push it to the Hub in one commit."""

from __future__ import annotations

import argparse
import json

from spl_hf.errors import SplHfError


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.configs import JsonArgs, PublishArgs, add_config_parser
    from spl_hf.hub import PublishFolderArgs

    p = add_config_parser(
        sub,
        name,
        (PublishFolderArgs, PublishArgs, JsonArgs),
        help=help_text,
        description="Audit the build folder (every row, the manifest, the tenet certificate) and refuse it "
        "unless clean; create the dataset repo --repo_id if needed; upload every file in ONE commit that also "
        "deletes the repo's files the build no longer has. Endpoint and token come from HF_ENDPOINT and "
        "HF_TOKEN. Prints the commit sha and the load_dataset(...) line pinned to it (--json: "
        '{"repo_id","commit_sha","files","configs","changed","private","provenance"}).',
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import httpx2  # huggingface_hub's HTTP client
    from huggingface_hub.errors import HfHubHTTPError

    from spl_hf.configs import configs_from_args
    from spl_hf.hub import publish

    folder, pub, js = configs_from_args(args)
    if not pub.repo_id:
        raise SplHfError("--repo_id is required: ORG/NAME of the dataset repo")
    try:
        result = publish(
            folder.path,
            pub.repo_id,
            revision=pub.revision,
            private=pub.private,
            create_pr=pub.create_pr,
            message=folder.message,
            sources=folder.sources,
            allow_empty=folder.allow_empty,
        )
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "no response"
        hint = " (is HF_TOKEN set to a token with write access?)" if status in (401, 403) else ""
        raise SplHfError(
            f"{pub.repo_id}: {_endpoint()} refused the push ({status}): {str(exc).splitlines()[0]}{hint}"
        ) from None
    except (httpx2.TransportError, ConnectionError) as exc:
        if "xet" in str(exc).lower():  # the endpoint answered, refusing Xet storage: not a network fault
            raise SplHfError(
                f"{pub.repo_id}: {_endpoint()} (HF_ENDPOINT) does not take Xet uploads; set HF_HUB_DISABLE_XET=1 "
                "to upload through classic LFS, and publish again (nothing was pushed)"
            ) from None
        raise SplHfError(f"{pub.repo_id}: cannot reach {_endpoint()} (HF_ENDPOINT): {exc}") from None
    if js.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    if result.visibility_changed:
        print(f"{result.repo_id} was public: made private, as --private asks")
    if not result.changed:
        pr = "; no pull request opened" if pub.create_pr else ""
        print(
            f"nothing changed: {result.repo_id}@{result.revision} already holds these {len(result.files)} "
            f"files{pr}"
        )
    else:
        where = f"pull request {result.pr_url}" if result.pr_url else f"{result.repo_id}@{result.revision}"
        print(f"published {len(result.files)} files ({len(result.deleted)} stale removed) to {where}")
    prov = result.provenance
    if prov.get("checked"):
        print(f"provenance: {prov['rows_checked']} rows checked against {len(prov['sources'])} source(s)")
    else:
        print("provenance: not checked (no --sources); the card says so")
    print(f"commit {result.commit_sha}")
    print(result.load_line())
    return 0


def _endpoint() -> str:
    import os

    return os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
