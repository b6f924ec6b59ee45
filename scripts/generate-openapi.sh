#!/usr/bin/env bash
# Makes the Sample's OpenAPI client (Sample/Sources/SocialOpenAPI) again from its openapi.yaml,
# with swift-openapi-generator 1.14.3. The generated files are committed: the generator's
# build plugin would build the generator on every clean build (minutes), and CI's is clean.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target="$root/Sample/Sources/SocialOpenAPI"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

git clone -q https://github.com/apple/swift-openapi-generator.git "$work/generator"
git -C "$work/generator" checkout -q 1.14.3
swift build -c release --package-path "$work/generator" --product swift-openapi-generator
rm -f "$target"/*.swift
"$work/generator/.build/release/swift-openapi-generator" generate \
    --config "$target/openapi-generator-config.yaml" --output-directory "$target" "$target/openapi.yaml"
echo "Generated $(ls "$target"/*.swift | wc -l) files in $target"
