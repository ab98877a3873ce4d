"""The commit path: commit messages, the committer, manifests, and looking up what a commit did."""
