package compattest

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// The metrics endpoint against idle connections: each of 600 connections
// scrapes once and stays open, past the broker's open file limit (256).
// Without a cap they held every descriptor the broker had, and its Remoting
// clients were refused until the attacker left; the endpoint now keeps at
// most metricsPromExporterMaxConnections (64 by default) and closes the
// rest at once, so the official client still sends and consumes.
func TestHostileMetricsFlood(t *testing.T) {
	start := time.Now()
	const nofile, flood = 256, 600
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	c := newHostileCluster(t, "metricsflood", nofile, "",
		fmt.Sprintf("metricsExporterType=PROM\nmetricsPromExporterHost=127.0.0.1\nmetricsPromExporterPort=%d\n", port))
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var mu sync.Mutex
	var conns []net.Conn
	served, refused, inARow := 0, 0, 0
	for i := 0; i < flood && inARow < 100; i++ { // 100 in a row: the rest would go the same way
		inARow++
		nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			refused++
			continue
		}
		conns = append(conns, nc)
		_ = nc.SetDeadline(time.Now().Add(time.Second))
		if _, err := fmt.Fprintf(nc, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			refused++
			continue
		}
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			refused++ // closed by the endpoint: over its cap
			continue
		}
		_ = resp.Body.Close()
		served++
		inARow = 0
	}
	defer func() {
		mu.Lock()
		for _, nc := range conns {
			_ = nc.Close()
		}
		mu.Unlock()
	}()
	t.Logf("%d of %d scrapes answered, %d refused or closed; broker descriptors %d", served, flood, refused, openFDs(c.broker))
	if served == 0 {
		t.Fatal("no scrape answered")
	}
	if served > 64 {
		t.Fatalf("%d idle scraping connections served at once; want at most metricsPromExporterMaxConnections (64)", served)
	}
	// The attacker's connections are still open: Remoting clients must be
	// served meanwhile.
	officialClientWorks(t, c, 10)
	report(t, start, 10, 10, fmt.Sprintf("metrics served=%d refused=%d", served, refused))
}
