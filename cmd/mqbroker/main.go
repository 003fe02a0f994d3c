// Command mqbroker runs a rocketgo broker. Flags follow Apache's mqbroker
// script: -c broker.conf, -n "ip:port;ip:port" (overrides namesrvAddr),
// -p prints the effective configuration and exits.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/processor"
	"github.com/rocketgo/rocketgo/remoting"
)

func main() {
	os.Exit(run())
}

// run returns the exit status: 0 after a requested stop, 1 when the broker
// could not start, stopped serving on its own, or did not shut down cleanly
// (a supervisor restarts it then).
func run() int {
	confFile := flag.String("c", "", "broker config file (Java properties, Apache key names)")
	namesrv := flag.String("n", "", "name server address list, e.g. 127.0.0.1:9876;127.0.0.2:9876")
	printConf := flag.Bool("p", false, "print the effective configuration and exit")
	flag.Parse()

	log := newLogger()
	cfg := broker.DefaultConfig()
	if *confFile != "" {
		if err := broker.LoadConfigFile(*confFile, &cfg, log); err != nil {
			log.Error().Err(err).Msg("load config")
			return 1
		}
	}
	if *namesrv != "" {
		cfg.NamesrvAddr = *namesrv
	}
	if *printConf {
		for _, kv := range config.Pairs(cfg) {
			fmt.Printf("%s=%s\n", kv[0], kv[1])
		}
		return 0
	}
	remoting.LogFileLimit(log)
	spareProc(&cfg, log)
	b, err := broker.New(cfg, log)
	if err != nil {
		log.Error().Err(err).Msg("open broker")
		return 1
	}
	startPprof(log)
	if err := b.Start(processor.BrokerTable(b, log)); err != nil {
		log.Error().Err(err).Msg("start broker")
		return 1
	}
	// Apache's start-up line on stdout: scripts and container checks wait for it.
	fmt.Printf("The broker[%s, %s] boot success. serializeType=JSON and name server is %s\n",
		cfg.BrokerName, b.Config().Addr(), cfg.NamesrvAddr)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	code := 0
	select {
	case s := <-sig:
		log.Info().Str("signal", s.String()).Msg("shutting down")
	case <-b.Done():
		log.Error().Err(b.Err()).Msg("network engine stopped unexpectedly")
		code = 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		log.Error().Err(err).Msg("shutdown")
		code = 1
	}
	return code
}

func newLogger() zerolog.Logger {
	level := zerolog.InfoLevel
	if l, err := zerolog.ParseLevel(os.Getenv("ROCKETGO_LOG")); err == nil && l != zerolog.NoLevel {
		level = l
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	return zerolog.New(os.Stderr).Level(level).With().Timestamp().Logger()
}
