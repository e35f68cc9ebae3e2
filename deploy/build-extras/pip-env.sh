# Sourced by deploy/Dockerfile before pip runs: use the staged CA bundle and pip.conf if any.
extras=/tmp/build-extras
if [ -f "$extras/ca-bundle.crt" ]; then
    export PIP_CERT="$extras/ca-bundle.crt" SSL_CERT_FILE="$extras/ca-bundle.crt"
fi
if [ -f "$extras/pip.conf" ]; then
    export PIP_CONFIG_FILE="$extras/pip.conf"
fi
