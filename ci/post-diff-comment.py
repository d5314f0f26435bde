"""Post `gitops-lint diff --format markdown` as one merge-request note or pull-request comment.

    python3 post-diff-comment.py gitlab|github REPORT.md

The note starts with a hidden marker; a later run finds the note holding it and updates it
instead of adding another. Python's standard library only: the GitLab component's image
(python:*-slim) has neither curl nor jq, and the GitHub Action has its own Python.

GitLab: CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID, and the token in the variable
named by GITOPS_LINT_TOKEN_VARIABLE (default GITLAB_TOKEN; CI_JOB_TOKEN cannot write notes),
sent as PRIVATE-TOKEN. GitHub: GITHUB_API_URL, GITHUB_REPOSITORY, GITOPS_LINT_PR (the pull
request's number) and GITHUB_TOKEN, sent as a bearer token.
"""

import json
import os
import sys
import urllib.error
import urllib.request

MARKER = "<!-- gitops-lint diff -->"
PER_PAGE = 100


def fail(message):
    print(f"gitops-lint diff comment: {message}", file=sys.stderr)
    sys.exit(2)


def need(name):
    value = os.environ.get(name, "")
    if not value:
        fail(f"${name} is not set")
    return value


def call(method, url, headers, body=None):
    data = None if body is None else json.dumps({"body": body}).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=dict(headers))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)
    except urllib.error.HTTPError as e:
        detail = e.read().decode(errors="replace")[:500]
        hint = ""
        if e.code in (401, 403, 404):
            hint = ("\nthe token may not write here: on GitLab, a token with the `api` scope and "
                    "the Reporter role or more; on GitHub, `pull-requests: write` (the "
                    "workflow's token is read-only on pull requests from forks)")
        fail(f"{method} {url}: HTTP {e.code} {detail}{hint}")
    except urllib.error.URLError as e:
        fail(f"{method} {url}: {e.reason}")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("gitlab", "github"):
        fail("usage: post-diff-comment.py gitlab|github REPORT.md")
    flavour, report = sys.argv[1], sys.argv[2]
    with open(report, encoding="utf-8") as f:
        body = f"{MARKER}\n{f.read()}"
    if flavour == "gitlab":
        variable = os.environ.get("GITOPS_LINT_TOKEN_VARIABLE") or "GITLAB_TOKEN"
        token = os.environ.get(variable, "")
        if not token:
            fail(f"${variable} is not set: a project or personal access token with the `api` "
                 "scope, in a masked CI/CD variable (the `token-variable` input names it)")
        api = need("CI_API_V4_URL").rstrip("/")
        notes = (f"{api}/projects/{need('CI_PROJECT_ID')}"
                 f"/merge_requests/{need('CI_MERGE_REQUEST_IID')}/notes")
        headers = {"PRIVATE-TOKEN": token}
        listing, update = f"{notes}?sort=asc&order_by=created_at", f"{notes}/{{}}"
        method = "PUT"
    else:
        token = need("GITHUB_TOKEN")
        api = (os.environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
        repo = f"{api}/repos/{need('GITHUB_REPOSITORY')}"
        notes = f"{repo}/issues/{need('GITOPS_LINT_PR')}/comments"
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }
        listing, update = f"{notes}?", f"{repo}/issues/comments/{{}}"
        method = "PATCH"
    headers["User-Agent"] = "gitops-lint"

    previous = None
    page = 1
    while previous is None:
        sep = "" if listing.endswith("?") else "&"
        items = call("GET", f"{listing}{sep}per_page={PER_PAGE}&page={page}", headers)
        for item in items:
            if not item.get("system") and MARKER in (item.get("body") or ""):
                previous = item["id"]
                break
        if len(items) < PER_PAGE:
            break
        page += 1
    if previous is None:
        created = call("POST", notes, headers, body)
        print(f"gitops-lint diff comment: created {created.get('id')}")
    else:
        call(method, update.format(previous), headers, body)
        print(f"gitops-lint diff comment: updated {previous}")


main()
