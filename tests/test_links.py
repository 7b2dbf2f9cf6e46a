"""What the README and nanlint's output point at exists: no links to an unpublished
repository, no pre-commit rev naming a tag that was never made, and the README's local
hooks are the shipped hooks."""

import re
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_no_links_to_the_unpublished_repository():
    texts = {"README.md": README, ".pre-commit-hooks.yaml": (ROOT / ".pre-commit-hooks.yaml").read_text()}
    texts.update({str(p.relative_to(ROOT)): p.read_text() for p in (ROOT / "nanlint").rglob("*.py")})
    offenders = [name for name, text in texts.items() if "github.com/nanlint" in text]
    assert offenders == []


def test_precommit_revs_are_existing_tags_or_a_commit_to_fill_in():
    tags = subprocess.run(["git", "tag", "--list"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    for rev in re.findall(r"^\s*rev:\s*(\S+)", README, re.MULTILINE):
        assert rev == "COMMIT_SHA" or re.fullmatch(r"[0-9a-f]{40}", rev) or rev in tags, \
            f"rev {rev!r} is not a tag of this repository (docs/RELEASING.md makes tags)"


def test_readme_local_hooks_match_the_shipped_hooks():
    shipped = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", README, re.DOTALL)]
    [local] = [repo for b in blocks if isinstance(b, dict) for repo in b.get("repos", []) if repo["repo"] == "local"]
    for hook in local["hooks"]:
        assert hook["entry"] == shipped[hook["id"]]["entry"]
        assert hook["types_or"] == shipped[hook["id"]]["types_or"]
        assert "--force-exclude" in hook["entry"]
