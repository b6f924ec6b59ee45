#!/usr/bin/env bash
# A screen's burst of GETs where users are (issue 62): nginx on 127.0.0.1 over TLS, one port
# with HTTP/2 (ALPN h2) and one with HTTP/1.1 only, every answer 50 ms late at the server
# (echo_sleep). Each figure is one fresh process (Benchmarks/Probes/BurstProbe): N distinct GETs sent
# at once, each decoded as the same two-element JSON array, through raw URLSession, raw
# AsyncHTTPClient, and the scheduler over each, at their defaults. Cold is the process's first
# burst; warm follows one request to the host. Also 400 `.low` GETs with one `.high` sent 10 ms
# into them, over HTTP/2. RUNS rounds (3 by default), clients in another order each round;
# prints every figure, then medians and the scheduler's ratio to its raw client (raw ÷ scheduler
# wall time: above 1 is faster than raw).
#
# On trust: URLSession on Linux trusts only the system store, so the run's own CA, made here,
# is added there (update-ca-certificates, which needs root) and removed when the run ends.
#
#     bash Benchmarks/scripts/latency-bursts.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
nginx=$(command -v nginx || echo /usr/sbin/nginx)
echo_module=/usr/lib/nginx/modules/ngx_http_echo_module.so
[ -x "$nginx" ] || { echo "nginx is not installed: apt-get install nginx"; exit 1; }
[ -f "$echo_module" ] || { echo "nginx's echo module is not installed: apt-get install libnginx-mod-http-echo"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "adding the run's CA to the system store needs root"; exit 1; }

swift build -c release --product BurstProbe >/dev/null
probe=$(swift build -c release --product BurstProbe --show-bin-path)/BurstProbe

work=$(mktemp -d)
anchor=/usr/local/share/ca-certificates/network-scheduler-latency-bursts.crt
cleanup() {
    kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true
    if [ -f "$anchor" ]; then rm -f "$anchor"; update-ca-certificates --fresh >/dev/null 2>&1; fi
    rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"

# A CA made for this run, and a certificate for 127.0.0.1 it signs.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=NetworkScheduler latency bursts CA" \
    -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$work/server.key" -out "$work/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > "$work/san.ext"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 1 \
    -extfile "$work/san.ext" -out "$work/server.crt" 2>/dev/null
echo "Adding this run's CA to the system store ($anchor); it is removed when the run ends."
cp "$work/ca.crt" "$anchor"
update-ca-certificates >/dev/null 2>&1

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
h2=$(free_port)
h1=$(free_port)
cat > "$work/nginx.conf" <<CONF
load_module $echo_module;
daemon on;
worker_processes 1;
pid $work/nginx.pid;
error_log stderr error;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/body;
    proxy_temp_path $work/proxy;
    fastcgi_temp_path $work/fastcgi;
    uwsgi_temp_path $work/uwsgi;
    scgi_temp_path $work/scgi;
    ssl_certificate $work/server.crt;
    ssl_certificate_key $work/server.key;
    keepalive_requests 100000;
    server {
        listen 127.0.0.1:$h2 ssl http2;
        location /items/ { default_type application/json; echo_sleep 0.05; echo '[{"id":2,"name":"Grace"},{"id":3,"name":"Alan"}]'; }
    }
    server {
        listen 127.0.0.1:$h1 ssl;
        location /items/ { default_type application/json; echo_sleep 0.05; echo '[{"id":2,"name":"Grace"},{"id":3,"name":"Alan"}]'; }
    }
}
CONF
"$nginx" -p "$work" -c "$work/nginx.conf"
for _ in $(seq 50); do curl -sf "https://127.0.0.1:$h2/items/ready" >/dev/null && break; sleep 0.1; done

clients=(urlsession scheduler-urlsession ahc scheduler-ahc)
results="$work/results"
: > "$results"
for round in $(seq "$runs"); do
    order=("${clients[@]}")
    if [ $((round % 2)) = 0 ]; then order=(scheduler-ahc ahc scheduler-urlsession urlsession); fi
    for case in "HTTP/2 $h2 40" "HTTP/2 $h2 200" "HTTP/1.1 $h1 40" "HTTP/1.1 $h1 200"; do
        read -r protocol port count <<<"$case"
        for start in cold warm; do
            for client in "${order[@]}"; do
                line=$("$probe" "$client" "https://127.0.0.1:$port" "$count" "$start")
                echo "$round $protocol $count $start $line" | tee -a "$results"
            done
        done
    done
    for client in "${order[@]}"; do
        line=$("$probe" "$client" "https://127.0.0.1:$h2" 400 warm high-in-low)
        echo "$round HTTP/2 400+high warm $line" | tee -a "$results"
    done
done

echo
echo "protocol | N | start | raw URLSession s | scheduler s | ratio | raw AHC s | scheduler s | ratio"
python3 - "$results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
cells = {}
for round_, protocol, count, start, client, wall, *high in rows:
    cells.setdefault((protocol, count, start), {}).setdefault(client, []).append((float(wall), float(high[0]) if high else None))
for (protocol, count, start), by in cells.items():
    med = lambda client, i=0: statistics.median(v[i] for v in by[client])
    line = [protocol, count, start]
    for raw, scheduled in (("urlsession", "scheduler-urlsession"), ("ahc", "scheduler-ahc")):
        line += [f"{med(raw):.3f}", f"{med(scheduled):.3f}", f"{med(raw) / med(scheduled):.2f}x"]
    if by["urlsession"][0][1] is not None:
        line += ["| .high answered in s: " + ", ".join(f"{client} {med(client, 1):.3f}" for client in by)]
    print(" | ".join(line))
PY
