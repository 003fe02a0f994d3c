// Command mqbroker runs a rocketgo broker. Flags follow Apache's mqbroker
// script: -c broker.conf, -n "ip:port;ip:port" (overrides namesrvAddr),
// -p prints the effective configuration and exits. --enable-proxy also
// serves the 5.x SDKs' gRPC from this process (Apache's local proxy mode),
// configured by -pc rmq-proxy.json; -bc is accepted for -c (what Apache's
// script hands its local proxy) and -pm is ignored (local is implied).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/auth"
	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/internal/logging"
	"github.com/rocketgo/rocketgo/internal/sysprops"
	"github.com/rocketgo/rocketgo/metrics"
	"github.com/rocketgo/rocketgo/processor"
	"github.com/rocketgo/rocketgo/proxy"
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
	enableProxy := flag.Bool("enable-proxy", false, "serve gRPC for the 5.x SDKs from this process (local proxy mode)")
	proxyConf := flag.String("pc", "", "proxy config file (rmq-proxy.json), with --enable-proxy")
	brokerConf := flag.String("bc", "", "broker config file, as -c")
	flag.String("pm", "", "proxy mode (local is implied by --enable-proxy)")
	props := sysprops.ParseFlags() // -Dtls.* as Apache's JAVA_OPT
	if *confFile == "" {
		*confFile = *brokerConf
	}

	log, logFile, err := logging.New("mqbroker")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer logFile.Close()
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
	var pcfg proxy.Config
	if *enableProxy {
		var err error
		if pcfg, err = proxyConfig(*proxyConf, cfg.NamesrvAddr, log); err != nil {
			log.Error().Err(err).Msg("load proxy config")
			return 1
		}
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
	spareProc(&cfg, log)
	// The store's config directory holds the ACL 2.0 files read next: an
	// unusable store path is reported as what it is, not as an ACL error.
	if err := os.MkdirAll(filepath.Join(cfg.Store.StorePathRootDir, "config"), 0o755); err != nil {
		log.Error().Err(err).Str("storePathRootDir", cfg.Store.StorePathRootDir).Msg("store directory unusable")
		return 1
	}
	authSvc, authIn, authGuard, err := startAuth(&cfg, *enableProxy, log)
	if err != nil {
		log.Error().Err(err).Msg("acl 2.0")
		return 1
	}
	b, err := broker.New(cfg, log)
	if err != nil {
		log.Error().Err(err).Msg("open broker")
		return 1
	}
	if err := signOutgoing(b, &cfg); err != nil {
		log.Error().Err(err).Msg("acl 2.0")
		return 1
	}
	startPprof(log)
	mcfg, msrc := metricsOf(b)
	m, err := metrics.New(mcfg, msrc, log)
	if err != nil {
		log.Error().Err(err).Msg("metrics")
		return 1
	}
	t := processor.BrokerTable(processor.ServicesOf(b), log)
	// Metrics outside ACL: a refused request is measured too.
	var is []remoting.Interceptor
	if m != nil {
		is = append(is, m.RPC)
	}
	stopACL := func() {}
	var aclAdmin processor.ACLAdmin // nil without aclEnable: the admin codes fail as Apache's
	if cfg.AclEnable {
		files, in, stop, err := startACL(cfg.RocketmqHome, log)
		if err != nil {
			log.Error().Err(err).Msg("acl")
			return 1
		}
		is, stopACL, aclAdmin = append(is, in), stop, files
	}
	defer stopACL()
	processor.RegisterACL(t, aclAdmin, b, log)
	// ACL 2.0 after 1.0: with both keys on, a request passes both (Apache
	// 5.3.3 has no ACL 1.0 left to combine with).
	if authIn != nil {
		is = append(is, authIn)
	}
	processor.RegisterAuth(t, authSvc, b, log)
	h := t.Intercept(is...)
	if err := b.Start(h); err != nil {
		log.Error().Err(err).Msg("start broker")
		return 1
	}
	if m != nil {
		// Not fatal: a second broker on the host (a slave beside its master,
		// a test cluster) finds the default port taken; it serves its
		// clients without an endpoint rather than not at all.
		if err := m.Start(); err != nil {
			log.Error().Err(err).Msg("metrics endpoint not started (metricsPromExporterHost/Port, or metricsExporterType=DISABLE)")
			m = nil
		}
	}
	var px *proxy.Server
	if *enableProxy {
		pcfg.TLS = cfg.TLS // its Remoting client dials the other brokers as this broker does
		if px, err = startProxy(pcfg, b, authGuard, log); err != nil {
			log.Error().Err(err).Msg("start proxy")
			_ = b.Shutdown(context.Background())
			return 1
		}
	}
	logStartup(log, b, m, px)
	// Apache's start-up line on stdout: scripts and container checks wait for it.
	fmt.Printf("The broker[%s, %s] boot success. serializeType=JSON and name server is %s\n",
		cfg.BrokerName, b.Config().Addr(), cfg.NamesrvAddr)
	if px != nil {
		fmt.Printf("rocketmq-proxy startup successfully, grpc %s\n", px.Addr())
	}
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
	if px != nil { // before the broker: parked receives end, sends in flight finish
		if err := px.Shutdown(ctx); err != nil {
			log.Error().Err(err).Msg("proxy shutdown")
			code = 1
		}
	}
	if m != nil {
		_ = m.Shutdown(ctx) // scrapes only; nothing to lose
	}
	if err := b.Shutdown(ctx); err != nil {
		log.Error().Err(err).Msg("shutdown")
		code = 1
	}
	return code
}

// proxyConfig is the local proxy's configuration: Apache's defaults, then
// file's keys; the broker's name servers unless the file names others.
func proxyConfig(file, namesrv string, log zerolog.Logger) (proxy.Config, error) {
	cfg := proxy.DefaultConfig()
	cfg.NamesrvAddr = ""
	if file != "" {
		if err := proxy.LoadConfigFile(file, &cfg, log); err != nil {
			return cfg, err
		}
	}
	if cfg.NamesrvAddr == "" {
		cfg.NamesrvAddr = namesrv
	}
	cfg.ProxyMode = "LOCAL"
	return cfg, cfg.Validate()
}

// startProxy serves gRPC beside b, reaching it in-process; guard (nil
// without ACL 2.0) checks its calls.
func startProxy(cfg proxy.Config, b *broker.Broker, guard *auth.GRPC, log zerolog.Logger) (*proxy.Server, error) {
	bc := b.Config()
	// The broker records the proxy's gRPC address as the connection's peer
	// (the born host of what it sends), as it would see mqproxy's socket.
	remote := net.JoinHostPort(bc.BrokerIP1, strconv.Itoa(cfg.GrpcServerPort))
	px, err := proxy.NewLocal(cfg, log, proxy.LocalBroker{Name: bc.BrokerName, Addr: bc.Addr(), Conn: b.Local(remote)})
	if err != nil {
		return nil, err
	}
	if guard != nil {
		px.SetGuard(guard)
	}
	if err := px.Start(""); err != nil {
		return nil, err
	}
	return px, nil
}

// logStartup writes one line with the addresses listened on and the keys
// whose value in force is not the default (what the file, the command line
// and the host made of it), and, at debug level, one with every key
// rocketgo honours, as -p prints them.
func logStartup(log zerolog.Logger, b *broker.Broker, m *metrics.Server, px *proxy.Server) {
	cfg := b.Config()
	defaults := map[string]string{}
	for _, kv := range config.Pairs(broker.DefaultConfig()) {
		defaults[kv[0]] = kv[1]
	}
	conf, all := zerolog.Dict(), zerolog.Dict()
	for _, kv := range config.Pairs(*cfg) {
		all.Str(kv[0], kv[1])
		if v, ok := defaults[kv[0]]; !ok || v != kv[1] {
			conf.Str(kv[0], kv[1])
		}
	}
	log.Debug().Dict("config", all).Msg("every configuration key")
	listen := []string{"remoting " + cfg.Addr()}
	if cfg.FastListenPort > 0 {
		listen = append(listen, "vip "+net.JoinHostPort(cfg.BrokerIP1, strconv.Itoa(cfg.FastListenPort)))
	}
	if !b.Role.IsSlave() || b.Role.ControllerMode() { // in controller mode every replica listens (AutoSwitch HA)
		listen = append(listen, "ha "+cfg.HAServerAddr())
	}
	if m != nil {
		listen = append(listen, "metrics "+m.Addr())
	}
	if px != nil {
		listen = append(listen, "grpc "+px.Addr().String())
	}
	log.Info().Strs("listen", listen).Dict("config", conf).Msg("effective configuration (keys not at their default)")
}

// metricsOf is what the metrics endpoint takes of b.
func metricsOf(b *broker.Broker) (metrics.Config, metrics.Source) {
	cfg := b.Config()
	return metrics.Config{
			ExporterType: cfg.MetricsExporterType, Label: cfg.MetricsLabel, Host: cfg.MetricsPromExporterHost,
			Port: cfg.MetricsPromExporterPort, MaxConnections: cfg.MetricsPromExporterMaxConnections,
			Cluster: cfg.BrokerClusterName, BrokerName: cfg.BrokerName, BrokerIP1: cfg.BrokerIP1,
		}, metrics.Source{
			Store: b.Store, Topics: b.Topics, Groups: b.Groups, Offsets: b.Offsets, Clients: b.Clients,
			Stats: &b.Stats, Tx: &b.Tx, Timer: &b.Timer, Revive: &b.Revive,
			StoreRoot: cfg.Store.StorePathRootDir, TimerWheel: cfg.TimerWheelEnable,
			Permission:      func() int32 { return b.Config().BrokerPermission },
			TimerTiming:     b.Role.TimerTiming,
			EachPopInFlight: b.Pops.EachInFlight, LiteLag: &b.LiteLag,
			LiteLagEnabled: func() (bool, bool) {
				c := b.Config()
				return c.LiteLagCountMetricsEnable, c.LiteLagLatencyMetricsEnable
			},
		}
}
