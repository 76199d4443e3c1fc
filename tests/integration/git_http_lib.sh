# A git repository served over HTTP for the egress scripts (t_egress.sh,
# t_proxy_standalone.sh, t_proxy_harness.sh): git_http_fixture DIR MESSAGE makes
# DIR/repos/demo.git (one commit of a README holding MESSAGE) and DIR/www/cgi-bin/git,
# git http-backend for python's CGI server (which may run it as nobody: everything
# under DIR is made readable).
git_http_fixture() {
	local d=$1 msg=$2
	mkdir -p "$d/www/cgi-bin" "$d/repos"
	git init -q "$d/src"
	echo "$msg" >"$d/src/README"
	git -C "$d/src" add README
	git -C "$d/src" -c user.name=t -c user.email=t@example.invalid commit -q -m init
	git clone -q --bare "$d/src" "$d/repos/demo.git"
	printf '[safe]\n\tdirectory = *\n' >"$d/gitconfig"
	cat >"$d/www/cgi-bin/git" <<G
#!/bin/sh
export GIT_PROJECT_ROOT="$d/repos" GIT_HTTP_EXPORT_ALL=1 GIT_CONFIG_GLOBAL="$d/gitconfig"
exec git http-backend
G
	chmod -R a+rX "$d"
	chmod 755 "$d/www/cgi-bin/git"
}
