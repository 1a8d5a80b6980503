# Sourced by the bench scripts that make CometBFT v1.0.1 a git tree of
# their own (bisect/history.sh, history/aa.sh): v101_tree DIR copies the
# v1.0.1 source from the module cache (downloaded through the proxy) into
# DIR, writable, makes it a git repository with everything committed, and
# defines g, git in DIR with a fixed identity.
v101_tree() {
  local dir=$1
  go mod download github.com/cometbft/cometbft@v1.0.1
  local src
  src="$(go env GOMODCACHE)/github.com/cometbft/cometbft@v1.0.1"
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  cp -r "$src" "$dir"
  chmod -R u+w "$dir"
  tree_dir=$dir
  g() { git -C "$tree_dir" -c user.name=benchnet -c user.email=bench@benchnet -c commit.gpgsign=false "$@"; }
  g init -q
  g add -A
  g commit -q -m "CometBFT v1.0.1 from the module zip"
}
