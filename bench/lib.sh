# Shell functions the bench scripts share; sourced, never run.

# pick_ports N: N ports below the ephemeral range (an outgoing connection
# took a port picked from it before the JVM bound it), each with p-2..p+2
# free (a broker also listens on listenPort-2, Apache's VIP channel, and
# listenPort+1, HA; an Apache slave binds its HA port too), all held while
# the next is picked so that none is another's neighbour.
pick_ports() {
	python3 - "$1" <<'PY'
import random, socket, sys
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
held, out = [], []
while len(out) < int(sys.argv[1]):
    p = random.randrange(max(lo - 12000, 2000), lo - 3)
    try:
        around = []
        for q in range(p - 2, p + 3):
            t = socket.socket(); t.bind(("127.0.0.1", q)); around.append(t)
    except OSError:
        for t in around:
            t.close()
        continue
    held += around
    out.append(p)
for t in held:
    t.close()
print(*out)
PY
}

# wait_port PORT SECONDS [PID]: until 127.0.0.1:PORT accepts, or fail;
# at once if process PID (the server that should open it) has exited.
wait_port() {
	local end=$((SECONDS + $2))
	while ((SECONDS < end)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then
			echo "port $1: process $3 exited" >&2
			return 1
		fi
		sleep 0.05
	done
	echo "port $1 not open after $2 s" >&2
	return 1
}

