package main

import (
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof on the default mux
	"os"

	"github.com/rs/zerolog"
)

// startPprof serves net/http/pprof on $ROCKETGO_PPROF (e.g. 127.0.0.1:6060)
// when it is set: how the hot paths are profiled under mqbench load. Off by
// default; it is a debugging port, so bind it to loopback.
func startPprof(log zerolog.Logger) {
	addr := os.Getenv("ROCKETGO_PPROF")
	if addr == "" {
		return
	}
	go func() {
		log.Info().Str("addr", addr).Msg("pprof listening")
		if err := http.ListenAndServe(addr, nil); err != nil {
			log.Error().Err(err).Str("addr", addr).Msg("pprof stopped")
		}
	}()
}
