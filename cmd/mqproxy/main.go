// Command mqproxy runs rocketgo's gRPC proxy in cluster mode, a drop-in for
// Apache RocketMQ 5's mqproxy: the 5.x SDKs connect to it on the gRPC port
// (8081) and it reaches brokers through the name servers over Remoting.
//
//	mqproxy [-pc rmq-proxy.json] [-n namesrv:9876[;...]] [-pm cluster] [-p]
//
// -pc loads Apache ProxyConfig keys (rmq-proxy.json); -n overrides
// namesrvAddr; -pm is Apache's proxy mode flag (only cluster here: local
// mode is mqbroker --enable-proxy); -p prints the effective config and
// exits. The log level comes from ROCKETGO_LOG (default info); logs are
// JSON on stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rocketgo/rocketgo/internal/logging"
	"github.com/rocketgo/rocketgo/internal/sysprops"
	"github.com/rocketgo/rocketgo/proxy"
)

func main() {
	os.Exit(run())
}

func run() int {
	configFile := flag.String("pc", "", "proxy config file (rmq-proxy.json)")
	namesrv := flag.String("n", "", "name server address list, a:9876;b:9876")
	mode := flag.String("pm", "", "proxy mode (cluster)")
	flag.String("bc", "", "broker config file (local mode only; ignored in cluster mode)")
	printConfig := flag.Bool("p", false, "print the effective config and exit")
	props := sysprops.ParseFlags() // -Dtls.* as Apache's JAVA_OPT

	log, logFile, err := logging.New("mqproxy")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer logFile.Close()

	cfg := proxy.DefaultConfig()
	if *configFile != "" {
		if err := proxy.LoadConfigFile(*configFile, &cfg, log); err != nil {
			log.Error().Err(err).Msg("config not loaded")
			return 1
		}
		log.Info().Str("file", *configFile).Msg("config loaded")
	}
	if *namesrv != "" {
		cfg.NamesrvAddr = *namesrv
	}
	if *mode != "" {
		cfg.ProxyMode = *mode
	}
	if *printConfig {
		shown := cfg
		if shown.InnerClientAuthenticationCredentials != "" {
			shown.InnerClientAuthenticationCredentials = "***" // a secret is never printed
		}
		b, _ := json.MarshalIndent(shown, "", "  ") // plain fields: cannot fail
		fmt.Println(string(b))
		return 0
	}
	if cfg.TLS, err = sysprops.ClientTLS(props, log); err != nil {
		log.Error().Err(err).Msg("tls")
		return 1
	}
	p, err := proxy.New(cfg, log)
	if err != nil {
		log.Error().Err(err).Msg("proxy not created")
		return 1
	}
	if err := startAuth(p, cfg, log); err != nil {
		log.Error().Err(err).Msg("acl 2.0")
		return 1
	}
	if err := p.Start(""); err != nil {
		log.Error().Err(err).Msg("proxy not started")
		return 1
	}
	// Apache's start-up line on stdout: scripts and container checks wait for it.
	fmt.Fprintf(os.Stdout, "rocketmq-proxy startup successfully, grpc %s\n", p.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	s := <-sig
	log.Info().Str("signal", s.String()).Msg("shutting down")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		log.Error().Err(err).Msg("shutdown incomplete")
		return 1
	}
	return 0
}
