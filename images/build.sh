#!/usr/bin/env bash
# Builds the evalcapsule container images and prints, for each, the
# reference a study records: name@sha256:<digest>.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: images/build.sh [--engine buildah|podman|docker] [--push REGISTRY/REPO]
                       [--insecure] [--ca-bundle FILE] capsule|lm-eval|all

Builds the static capsule binary (cgo, glibc linked in), then the image(s):
  capsule   FROM scratch: the binary and a CA bundle (images/capsule)
  lm-eval   lm-eval, vLLM, torch pinned end to end, capsule as entrypoint
            (images/lm-eval; needs network and takes a while)
  all       both

For each image it prints one line on standard output:
  IMAGE LOCAL-NAME@sha256:DIGEST
and with --push, after pushing IMAGE to REGISTRY/REPO/IMAGE:TAG:
  IMAGE REGISTRY/REPO/IMAGE@sha256:DIGEST
The pushed reference is the one a study names (harness: {image: ...});
the local digest is valid on this machine only (a push compresses the
layers, which changes the digest).

options:
  --engine E       buildah, podman or docker (default: the first found, in
                   that order)
  --push R         push to R/capsule and R/lm-eval, e.g. ghcr.io/org/evalcapsule
  --insecure       the registry speaks plain HTTP or has an untrusted
                   certificate (buildah and podman: --tls-verify=false)
  --ca-bundle F    CA certificates copied into the capsule image (default
                   /etc/ssl/certs/ca-certificates.crt)
  -h, --help       this text

environment:
  IMAGE_PREFIX     local image names (default localhost/evalcapsule)

exit status: 0 built (and pushed); 1 a build or push failed; 2 usage error.
EOF
}

die() {
	echo "build.sh: $*" >&2
	exit 1
}

usage_error() {
	echo "build.sh: $*" >&2
	echo "run images/build.sh --help for usage" >&2
	exit 2
}

engine=""
push=""
insecure=0
ca_bundle=/etc/ssl/certs/ca-certificates.crt
target=""
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help)
		usage
		exit 0
		;;
	--engine)
		[ $# -ge 2 ] || usage_error "--engine needs a value"
		engine=$2
		shift 2
		;;
	--engine=*)
		engine=${1#--engine=}
		shift
		;;
	--push)
		[ $# -ge 2 ] || usage_error "--push needs a value"
		push=$2
		shift 2
		;;
	--push=*)
		push=${1#--push=}
		shift
		;;
	--insecure)
		insecure=1
		shift
		;;
	--ca-bundle)
		[ $# -ge 2 ] || usage_error "--ca-bundle needs a value"
		ca_bundle=$2
		shift 2
		;;
	--ca-bundle=*)
		ca_bundle=${1#--ca-bundle=}
		shift
		;;
	-*)
		usage_error "unknown option $1"
		;;
	*)
		[ -z "$target" ] || usage_error "one target only (capsule, lm-eval or all)"
		target=$1
		shift
		;;
	esac
done

case "$target" in
capsule) images=(capsule) ;;
lm-eval) images=(lm-eval) ;;
all) images=(capsule lm-eval) ;;
"") usage_error "no target: capsule, lm-eval or all" ;;
*) usage_error "unknown target $target: capsule, lm-eval or all" ;;
esac

case "$engine" in
"" | buildah | podman | docker) ;;
*) usage_error "unknown engine $engine: buildah, podman or docker" ;;
esac
case "$push" in
"" | */*) ;;
*) usage_error "--push wants REGISTRY/REPO (e.g. ghcr.io/org/evalcapsule), got $push" ;;
esac

if [ -z "$engine" ]; then
	for e in buildah podman docker; do
		if command -v "$e" >/dev/null 2>&1; then
			engine=$e
			break
		fi
	done
	[ -n "$engine" ] || die "no container engine found: install buildah, podman or docker"
fi
command -v "$engine" >/dev/null 2>&1 || die "$engine not found on PATH"
command -v go >/dev/null 2>&1 || die "go not found on PATH: it builds the capsule binary"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=${IMAGE_PREFIX:-localhost/evalcapsule}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The static capsule: cgo on (the re-scorer calls glibc's exp and pow), the
# C library linked in, no dynamic loader, no NSS.
echo "build.sh: building the static capsule binary" >&2
(cd "$root" && CGO_ENABLED=1 go build -tags netgo,osusergo -trimpath \
	-ldflags "-linkmode external -extldflags -static -s -w" \
	-o "$work/capsule" ./cmd/capsule) || die "building capsule failed"
version=$("$work/capsule" --version) || die "the capsule binary does not run"
version=${version#capsule }
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
if [ "$revision" != unknown ] && [ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ]; then
	echo "build.sh: warning: the work tree has uncommitted changes; the revision label says $revision" >&2
fi
# A tag may hold letters, digits, '_', '.', '-' (at most 128).
tag=$(printf '%s' "$version" | tr -c 'A-Za-z0-9_.-' '-' | cut -c1-128)

# context IMAGE DIR: the build context of IMAGE, with only what its
# Containerfile copies.
context() {
	local image=$1 dir=$2 f
	mkdir -p "$dir"
	cp "$work/capsule" "$dir/capsule"
	for f in "$root/images/$image"/* "$root/images/$image"/.containerignore; do
		[ -f "$f" ] && cp "$f" "$dir/"
	done
	if [ -f "$dir/.containerignore" ]; then
		cp "$dir/.containerignore" "$dir/.dockerignore"
	fi
	if [ "$image" = capsule ]; then
		[ -f "$ca_bundle" ] || die "no CA bundle at $ca_bundle (give one with --ca-bundle)"
		cp "$ca_bundle" "$dir/ca-certificates.crt"
	fi
}

# local_digest NAME: the manifest digest of a local image.
local_digest() {
	case "$engine" in
	buildah) buildah inspect --type image --format '{{.FromImageDigest}}' "$1" ;;
	podman) podman image inspect --format '{{.Digest}}' "$1" ;;
	docker) docker image inspect --format '{{.Id}}' "$1" ;;
	esac
}

for image in "${images[@]}"; do
	dir="$work/ctx-$image"
	context "$image" "$dir"
	name="$prefix/$image:$tag"
	args=(-f "$dir/Containerfile" -t "$name"
		--build-arg "EVALCAPSULE_REVISION=$revision"
		--build-arg "EVALCAPSULE_VERSION=$version")
	echo "build.sh: building $name with $engine" >&2
	case "$engine" in
	buildah) buildah build --timestamp 0 "${args[@]}" "$dir" >&2 ;;
	podman) podman build --timestamp 0 "${args[@]}" "$dir" >&2 ;;
	docker) docker build "${args[@]}" "$dir" >&2 ;;
	esac || die "building $image failed"
	digest=$(local_digest "$name") || die "reading the digest of $name failed"
	case "$digest" in
	sha256:*) ;;
	*) die "unexpected digest for $name: $digest" ;;
	esac
	if [ "$engine" = docker ]; then
		# Docker knows a manifest digest only once the image is pushed;
		# locally it has the image ID (the config's digest).
		echo "$image $name (image ID $digest)"
	else
		echo "$image ${name%:*}@$digest"
	fi

	if [ -n "$push" ]; then
		remote="$push/$image:$tag"
		echo "build.sh: pushing $remote" >&2
		case "$engine" in
		buildah | podman)
			tls=()
			[ "$insecure" = 1 ] && tls=(--tls-verify=false)
			"$engine" push "${tls[@]}" --digestfile "$work/digest-$image" "$name" "docker://$remote" >&2 ||
				die "pushing $remote failed"
			pushed=$(cat "$work/digest-$image")
			;;
		docker)
			{ docker tag "$name" "$remote" && docker push "$remote" >&2; } || die "pushing $remote failed"
			pushed=$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$remote" |
				grep -F "$push/$image@" | head -n1)
			pushed=${pushed#*@}
			;;
		esac
		case "$pushed" in
		sha256:*) echo "$image $push/$image@$pushed" ;;
		*) die "no digest for the pushed $remote" ;;
		esac
	fi
done
