"""Access to gated sources (`cais/hle`), checked before anything is downloaded.

`huggingface_hub`'s `auth_check` tells apart no token, a token without access to the repo
and a rejected token; each gets one line naming the source, the rows it feeds and the fix.
"""

from __future__ import annotations

from specbench.common.errors import SpecbenchError
from specbench.data.prepare.registry import SOURCES

ACCESS_HINT = (
    "accept its terms at https://huggingface.co/datasets/{repo} with your account, then "
    "`huggingface-cli login` (or set HF_TOKEN); or pass --skip-gated to write the other rows "
    "marked partial"
)


def gated_repos() -> list[str]:
    return [source.repo for source in SOURCES if source.gated and source.repo]


def check_access(repo: str) -> None:
    """Raise one line unless the current token can read the gated dataset `repo`."""
    from huggingface_hub import HfApi, get_token
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError

    rows = f"source {repo} (the HLE rows of every config)"
    hint = ACCESS_HINT.format(repo=repo)
    if not get_token():
        raise SpecbenchError(f"{rows} is gated and no Hugging Face token is set; {hint}")
    try:
        HfApi().auth_check(repo, repo_type="dataset")
    except GatedRepoError as error:
        raise SpecbenchError(
            f"{rows}: your token has no access to this gated repo; {hint}"
        ) from error
    except RepositoryNotFoundError as error:
        raise SpecbenchError(
            f"{rows}: the token was rejected or cannot see the repo; check HF_TOKEN; {hint}"
        ) from error
    except HfHubHTTPError as error:
        raise SpecbenchError(f"{rows}: access check failed ({error}); {hint}") from error
