#!/bin/sh
# base.sh builds the image our Dockerfile starts FROM when no registry is
# reachable: a Debian bookworm minbase rootfs made with debootstrap and
# imported with `docker import`. The rootfs tarball is cached outside the
# clone (ROCKETGO_DOCKER_CACHE, default /var/cache/rocketgo-docker) so a
# second run, or a run after `docker rmi`, costs seconds, not minutes.
#
# Usage: docker/base.sh [image]      (default rocketgo-base:bookworm)
# Env:   DEBIAN_MIRROR (default: the mirror apt uses, else deb.debian.org)
#        ARCH: a Debian architecture other than the host's (arm64): the
#        rootfs's binaries then run under qemu-user-static through binfmt_misc
#        (installed and registered here when missing), and the image is
#        imported as linux/ARCH
set -eu

IMAGE=${1:-rocketgo-base:bookworm}
CACHE=${ROCKETGO_DOCKER_CACHE:-/var/cache/rocketgo-docker}
ARCH=${ARCH:-}
TARBALL=$CACHE/bookworm-minbase${ARCH:+-$ARCH}.tar
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
	echo "base.sh: $IMAGE exists"
	exit 0
fi

if [ ! -s "$TARBALL" ]; then
	command -v debootstrap >/dev/null 2>&1 || {
		echo "base.sh: installing debootstrap" >&2
		apt-get install -y debootstrap >/dev/null
	}
	mkdir -p "$CACHE"
	ROOT=$(mktemp -d "$CACHE/rootfs.XXXXXX")
	trap 'rm -rf "$ROOT"' EXIT
	echo "base.sh: debootstrap bookworm minbase into $ROOT (a few minutes, once)" >&2
	if [ -n "$ARCH" ]; then
		command -v qemu-aarch64-static >/dev/null 2>&1 || apt-get install -y qemu-user-static binfmt-support >/dev/null
		[ -e /proc/sys/fs/binfmt_misc/register ] ||
			mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
		update-binfmts --enable >/dev/null 2>&1 || true
	fi
	debootstrap --variant=minbase ${ARCH:+--arch=$ARCH} bookworm "$ROOT" "$MIRROR" >"$CACHE/debootstrap${ARCH:+-$ARCH}.log" 2>&1 || {
		tail -20 "$CACHE/debootstrap${ARCH:+-$ARCH}.log" >&2
		exit 1
	}
	# Nothing in the image runs apt: drop its lists, caches and the docs to
	# keep the base small.
	rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/* \
		"$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/locale/*
	tar -C "$ROOT" -cf "$TARBALL.tmp" . && mv "$TARBALL.tmp" "$TARBALL"
fi

echo "base.sh: docker import $TARBALL as $IMAGE" >&2
docker import -c 'CMD ["/bin/sh"]' "$TARBALL" "$IMAGE" >/dev/null
if [ -n "$ARCH" ]; then
	# An engine without the experimental flag imports as its own
	# architecture whatever --platform says: rewrite the image config's
	# "architecture" (docker save, edit, docker load; the image id is the
	# config's digest, so the file is renamed and the manifest follows).
	d=$(mktemp -d "${TMPDIR:-/tmp}/rocketgo-base.XXXXXX")
	old=$(docker image inspect -f '{{.Id}}' "$IMAGE")
	docker save "$IMAGE" | tar -C "$d" -xf -
	cfg=$(sed -n 's/.*"Config":"\([^"]*\)".*/\1/p' "$d/manifest.json")
	sed -i "s/\"architecture\":\"[a-z0-9]*\"/\"architecture\":\"$ARCH\"/" "$d/$cfg"
	new=$(sha256sum "$d/$cfg" | cut -c1-64).json
	mv "$d/$cfg" "$d/$new"
	sed -i "s/$cfg/$new/" "$d/manifest.json"
	tar -C "$d" -cf - . | docker load >/dev/null
	rm -rf "$d"
	docker rmi "$old" >/dev/null 2>&1 || true
fi
echo "base.sh: $IMAGE built"
