// Command mqnamesrv runs a rocketgo name server, a drop-in for Apache
// RocketMQ's mqnamesrv.
//
//	mqnamesrv [-c namesrv.properties] [-p]
//
// -c loads Apache NamesrvConfig/NettyServerConfig keys from a properties
// file; -p prints the effective config and exits. The log level comes from
// ROCKETGO_LOG (default info); logs are JSON on stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/controller"
	"github.com/rocketgo/rocketgo/internal/logging"
	"github.com/rocketgo/rocketgo/internal/sysprops"
	"github.com/rocketgo/rocketgo/namesrv"
	"github.com/rocketgo/rocketgo/remoting"
)

func main() {
	os.Exit(run())
}

func run() int {
	configFile := flag.String("c", "", "name server config properties file")
	printConfig := flag.Bool("p", false, "print all config items and exit")
	props := sysprops.ParseFlags() // -Dtls.* as Apache's JAVA_OPT

	log, logFile, err := logging.New("mqnamesrv")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer logFile.Close()

	cfg := namesrv.DefaultConfig()
	ccfg := controller.DefaultConfig()
	var em embed
	if *configFile != "" {
		if err := loadConfigs(*configFile, &cfg, &ccfg, &em, log); err != nil {
			log.Error().Err(err).Msg("config not loaded")
			return 1
		}
		log.Info().Str("file", *configFile).Msg("config loaded")
	}
	if *printConfig {
		for _, kv := range config.Pairs(cfg) {
			fmt.Printf("%s=%s\n", kv[0], kv[1])
		}
		if em.EnableControllerInNamesrv {
			for _, kv := range config.Pairs(ccfg) {
				fmt.Printf("%s=%s\n", kv[0], kv[1])
			}
		}
		return 0
	}

	tl, err := sysprops.TLS(props, log)
	if err != nil {
		log.Error().Err(err).Msg("tls")
		return 1
	}
	cfg.TLS, ccfg.TLS = tl, tl
	remoting.LogFileLimit(log)
	if err := cfg.Version.Apply(); err != nil {
		log.Error().Err(err).Msg("reportedVersion")
		return 1
	}
	ns, err := namesrv.New(cfg, log)
	if err != nil {
		log.Error().Err(err).Msg("name server not created")
		return 1
	}
	if err := ns.Start(ns.Handlers()); err != nil {
		log.Error().Err(err).Msg("name server not started")
		return 1
	}
	// The embedded controller (enableControllerInNamesrv) serves its own
	// port, the self entry of controllerDLegerPeers, as Apache's does.
	var ctl *controller.Controller
	if em.EnableControllerInNamesrv {
		if ctl, err = controller.New(ccfg, log); err == nil {
			err = ctl.Start()
		}
		if err != nil {
			log.Error().Err(err).Msg("embedded controller not started")
			shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = ns.Shutdown(shutCtx) // the controller's error is the one reported
			cancel()
			return 1
		}
	}
	// Apache's start-up line on stdout: scripts and container checks wait for it.
	fmt.Fprintf(os.Stdout, "The Name Server boot success. serializeType=JSON, address %s\n", ns.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	code := 0
	select {
	case s := <-sig:
		log.Info().Str("signal", s.String()).Msg("shutting down")
	case <-ctlDone(ctl):
		log.Error().Err(ctl.Err()).Msg("controller remoting engine stopped unexpectedly")
		code = 1
	case <-ns.Done():
		log.Error().Err(ns.Err()).Msg("remoting engine stopped unexpectedly")
		code = 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if ctl != nil {
		if err := ctl.Shutdown(ctx); err != nil {
			log.Error().Err(err).Msg("controller shutdown incomplete")
			code = 1
		}
	}
	if err := ns.Shutdown(ctx); err != nil {
		log.Error().Err(err).Msg("shutdown incomplete")
		code = 1
	}
	return code
}
