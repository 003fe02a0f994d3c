// Command mqcontroller runs a rocketgo controller, a drop-in for Apache
// RocketMQ's mqcontroller (controller mode of 5.x brokers).
//
//	mqcontroller [-c controller.conf] [-p] [-m]
//
// -c loads Apache ControllerConfig keys (controllerDLegerGroup,
// controllerDLegerPeers, controllerDLegerSelfId, controllerStorePath, …)
// from a properties file; -p prints every config item and exits; -m prints
// the important ones (the group, peers, self id and store) and exits. The
// controllers replicate with raft, not DLedger (see package controller).
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
	"github.com/rocketgo/rocketgo/remoting"
)

// important are the keys -m prints.
var important = map[string]bool{
	"controllerDLegerGroup": true, "controllerDLegerPeers": true, "controllerDLegerSelfId": true,
	"controllerStorePath": true, "enableElectUncleanMaster": true, "notifyBrokerRoleChanged": true,
	"controllerRaftPortOffset": true, "bindAddress": true, "authenticationEnabled": true, "authorizationEnabled": true,
}

func main() {
	os.Exit(run())
}

func run() int {
	configFile := flag.String("c", "", "controller config properties file")
	printConfig := flag.Bool("p", false, "print all config items and exit")
	printImportant := flag.Bool("m", false, "print important config items and exit")
	props := sysprops.ParseFlags() // -Dtls.* as Apache's JAVA_OPT

	log, logFile, err := logging.New("mqcontroller")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer logFile.Close()

	cfg := controller.DefaultConfig()
	if *configFile != "" {
		if err := config.Load(*configFile, &cfg, log); err != nil {
			log.Error().Err(err).Msg("config not loaded")
			return 1
		}
		fmt.Printf("load config properties file OK, %s\n", *configFile)
	}
	if *printConfig || *printImportant {
		for _, kv := range config.Pairs(cfg) {
			if *printConfig || important[kv[0]] {
				fmt.Printf("%s=%s\n", kv[0], kv[1])
			}
		}
		return 0
	}

	if cfg.TLS, err = sysprops.TLS(props, log); err != nil {
		log.Error().Err(err).Msg("tls")
		return 1
	}
	remoting.LogFileLimit(log)
	if err := cfg.Version.Apply(); err != nil {
		log.Error().Err(err).Msg("reportedVersion")
		return 1
	}
	c, err := controller.New(cfg, log)
	if err != nil {
		log.Error().Err(err).Msg("controller not created")
		return 1
	}
	if err := c.Start(); err != nil {
		log.Error().Err(err).Msg("controller not started")
		return 1
	}
	fmt.Fprintf(os.Stdout, "The Controller boot success, address %s\n", c.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	code := 0
	select {
	case s := <-sig:
		log.Info().Str("signal", s.String()).Msg("shutting down")
	case <-c.Done():
		log.Error().Err(c.Err()).Msg("remoting engine stopped unexpectedly")
		code = 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		log.Error().Err(err).Msg("shutdown incomplete")
		code = 1
	}
	return code
}
