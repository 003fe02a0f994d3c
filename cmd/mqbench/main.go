// Command mqbench benchmarks RocketMQ brokers (rocketgo or Apache) over the
// Remoting protocol, in the spirit of Apache's
// org.apache.rocketmq.example.benchmark.Producer / Consumer, but pipelined:
// every connection keeps a window of requests in flight.
//
//	mqbench produce -n 127.0.0.1:9876 -t BenchTopic -create-topic -c 4 -w 32 -s 1024 -d 30s
//	mqbench consume -n 127.0.0.1:9876 -t BenchTopic -count 1000000
//	mqbench e2e     -n 127.0.0.1:9876 -t BenchTopic -create-topic -rate 10000 -d 30s
//	mqbench probe   -n 127.0.0.1:9876 -t BenchTopic -create-topic -since $(date +%s%N)
//	mqbench grpc-produce -proxy 127.0.0.1:8081 -tls -t BenchTopic -c 4 -w 32 -s 1024 -d 30s
//	mqbench grpc-pop -proxy 127.0.0.1:8081 -n 127.0.0.1:9876 -t BenchTopic -g BenchGroup -c 1000 -count 100000 -d 600s
//	mqbench route   -n 127.0.0.1:9876 -t BenchTopic -c 100 -w 1 -d 30s
//	mqbench idle    -broker 127.0.0.1:10911 -c 10000 -d 1h
//	mqbench produce -n 127.0.0.1:9876 -t LiteParent -create-topic -lite 100000 -count 100000
//	mqbench lite-consume -n 127.0.0.1:9876 -t LiteParent -g LiteGroup -lite 100000 -count 100000
//
// Every mode prints one row per interval and role (send: send round trip;
// pull: pull round trip; e2e: born-to-consumed latency from a wall-clock
// stamp in each body's first 8 bytes; pop: receive or pop round trip,
// messages acked) and SUMMARY lines at the end;
// -csv and -plot write the rows as CSV and as an SVG chart.
package main

import (
	"github.com/rocketgo/rocketgo/internal/adminclient"

	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
)

type options struct {
	mode        string
	namesrv     string
	broker      string
	brokerName  string
	topic       string
	topics      int
	lite        int
	group       string
	groups      int
	loop        bool
	conns       int
	window      int
	size        int
	keys        bool
	tag         string
	uniq        bool
	batch       int
	count       int64
	duration    time.Duration
	durationSet bool // -d given: grpc-pop with -count stops at whichever comes first
	rate        float64
	createTopic bool
	queues      int
	interval    time.Duration
	csv         string
	plot        string
	serName     string
	ser         remoting.SerializeType
	pullBatch   int
	from        string
	e2e         bool
	since       int64
	timeout     time.Duration
	routeOnly   bool
	heartbeat   time.Duration
	proxy       string
	tls         bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		return nil, errors.New("usage: mqbench produce|consume|e2e|probe|route|idle|grpc-produce|grpc-pop|lite-consume [flags]  (mqbench <mode> -h lists flags)")
	}
	o := &options{mode: args[0]}
	fs := flag.NewFlagSet("mqbench "+o.mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.namesrv, "n", "", "name server address (ip:port[;ip:port]); routes via GET_ROUTEINFO_BY_TOPIC")
	fs.StringVar(&o.broker, "broker", "", "broker address; bypasses the name server (queues 0..-q-1)")
	fs.StringVar(&o.brokerName, "broker-name", "", "broker name sent as bname with -broker")
	fs.StringVar(&o.topic, "t", "BenchmarkTest", "topic")
	fs.IntVar(&o.topics, "topics", 1, "with N > 1: the N topics <-t>_0..<-t>_<N-1>, taken round robin, each laid out as the first")
	fs.IntVar(&o.lite, "lite", 0, "produce: N lite topics lite0..lite<N-1> under -t (a LITE parent), taken round robin; lite-consume: subscribe to and pop them")
	fs.StringVar(&o.group, "g", "", "producer / consumer group (default mqbench_<mode>_<pid>)")
	fs.IntVar(&o.groups, "groups", 1, "consume: N consumer groups <-g>_0..<-g>_<N-1>, each reading every queue (-count counts all their messages)")
	fs.BoolVar(&o.loop, "loop", false, "consume: at a queue's end read it again from the start offset instead of waiting")
	fs.IntVar(&o.conns, "c", 4, "connections (producer threads / consumer workers; grpc-pop: simple consumers, a connection each)")
	fs.IntVar(&o.window, "w", 32, "in-flight requests per producer connection / per consumed queue")
	fs.IntVar(&o.size, "s", 128, "message body size in bytes")
	fs.BoolVar(&o.keys, "k", false, "set a KEYS property on every message")
	fs.StringVar(&o.tag, "tag", "", "TAGS property on every message")
	fs.BoolVar(&o.uniq, "uniq", true, "set a UNIQ_KEY property like the Java producer")
	fs.IntVar(&o.batch, "b", 1, "messages per request; > 1 uses SEND_BATCH_MESSAGE (320)")
	fs.Int64Var(&o.count, "count", 0, "messages to send (produce/e2e) or to consume (consume, lite-consume; grpc-pop: to ack); 0 = use -d")
	fs.DurationVar(&o.duration, "d", 10*time.Second, "run time when -count is 0 (grpc-pop: also with -count, when given)")
	fs.Float64Var(&o.rate, "rate", 0, "total send rate in messages/s (0 = as fast as the window allows)")
	fs.BoolVar(&o.createTopic, "create-topic", false, "create the topic first (UPDATE_AND_CREATE_TOPIC 17) on -broker or every broker routed for TBW102")
	fs.IntVar(&o.queues, "q", 8, "queues for -create-topic and for -broker without a name server")
	fs.DurationVar(&o.interval, "i", time.Second, "report interval")
	fs.StringVar(&o.csv, "csv", "", "write per-interval rows to this CSV file")
	fs.StringVar(&o.plot, "plot", "", "write an SVG plot of TPS and latency to this file")
	fs.StringVar(&o.serName, "ser", "rocketmq", "request header format: rocketmq (binary, as Apache's benchmark) or json")
	fs.IntVar(&o.pullBatch, "pull-batch", 32, "maxMsgNums per pull")
	fs.StringVar(&o.from, "from", "", "consume from: earliest (consume default) or latest (e2e default)")
	fs.BoolVar(&o.e2e, "e2e", false, "consume: measure born-to-consumed latency instead of pull round trip")
	fs.Int64Var(&o.since, "since", 0, "probe: Unix-ns start time the start-up time is measured from")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "probe, route: give up waiting for the broker or the route after this long; grpc-pop: for a consumer's start")
	fs.BoolVar(&o.routeOnly, "route", false, "probe: wait for -t's route on the name server instead of a send; also count its topics")
	fs.DurationVar(&o.heartbeat, "hb", 30*time.Second, "idle: each connection's request interval (0: only the first)")
	fs.StringVar(&o.proxy, "proxy", "", "grpc-produce, grpc-pop: the gRPC proxy (host:port)")
	fs.BoolVar(&o.tls, "tls", false, "grpc-produce, grpc-pop: TLS to the proxy (certificate not verified)")
	if err := fs.Parse(args[1:]); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) { o.durationSet = o.durationSet || f.Name == "d" })
	switch strings.ToLower(o.serName) {
	case "rocketmq", "binary":
		o.ser = remoting.RocketMQ
	case "json":
		o.ser = remoting.JSON
	default:
		return nil, fmt.Errorf("-ser %q: want rocketmq or json", o.serName)
	}
	if o.group == "" {
		o.group = fmt.Sprintf("mqbench_%s_%d", o.mode, os.Getpid())
	}
	if o.from == "" {
		o.from = "earliest"
		if o.mode == "e2e" {
			o.from = "latest"
		}
	}
	if o.conns < 1 || o.window < 1 || o.size < 0 || o.batch < 1 || o.queues < 1 || o.pullBatch < 1 || o.groups < 1 {
		return nil, errors.New("-c, -w, -b, -q, -pull-batch, -groups must be >= 1 and -s >= 0")
	}
	if o.lite < 0 || (o.lite > 0 && o.mode != "produce" && o.mode != "lite-consume") {
		return nil, errors.New("-lite N (N >= 1) is for produce and lite-consume")
	}
	if (o.groups > 1 || o.loop) && o.mode != "consume" {
		return nil, errors.New("-groups and -loop are for consume")
	}
	if o.interval <= 0 {
		o.interval = time.Second
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(2)
	}
	stop := make(chan struct{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		close(stop)
	}()
	if _, err := run(o, os.Stdout, stop); err != nil {
		fmt.Fprintln(os.Stderr, "mqbench:", err)
		os.Exit(1)
	}
}

// run executes one benchmark and returns its summaries. stop ends it early.
func run(o *options, out io.Writer, stop <-chan struct{}) ([]summary, error) {
	a := newAdmin(o)
	defer a.Close()
	switch o.mode {
	case "produce":
		return runProduce(o, a, out, stop)
	case "consume":
		return runConsume(o, a, out, stop)
	case "e2e":
		return runE2E(o, a, out, stop)
	case "probe":
		return nil, runProbe(o, a, out)
	case "grpc-produce":
		return runGRPCProduce(o, a, out, stop)
	case "grpc-pop":
		return runGRPCPop(o, a, out, stop)
	case "route":
		return runRoute(o, a, out, stop)
	case "idle":
		return nil, runIdle(o, a, out, stop)
	case "lite-consume":
		return runLiteConsume(o, a, out, stop)
	}
	return nil, fmt.Errorf("unknown mode %q: want produce, consume, e2e, probe, route, idle, grpc-produce, grpc-pop or lite-consume", o.mode)
}

func describe(out io.Writer, o *options, targets []target) {
	brokers := map[string]bool{}
	for _, t := range targets {
		brokers[t.addr] = true
	}
	fmt.Fprintf(out, "# mqbench %s topic=%s topics=%d queues=%d brokers=%d conns=%d window=%d size=%d batch=%d keys=%v tag=%q ser=%s count=%d duration=%s rate=%g groups=%d\n",
		o.mode, o.topic, max(o.topics, 1), len(targets), len(brokers), o.conns, o.window, o.size, o.batch, o.keys, o.tag, o.ser, o.count, o.duration, o.rate, o.groups)
}

// deadline closes the returned channel when stop closes, when d elapses
// (d > 0) or when done closes (done != nil).
func deadline(stop <-chan struct{}, d time.Duration, done <-chan struct{}) chan struct{} {
	ch := make(chan struct{})
	go func() {
		var tc <-chan time.Time
		if d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			tc = t.C
		}
		select {
		case <-stop:
		case <-tc:
		case <-done:
		}
		close(ch)
	}()
	return ch
}

func finish(o *options, rp *reporter, elapsed time.Duration) ([]summary, error) {
	sums := rp.summarize(elapsed)
	if o.csv != "" {
		if err := writeCSV(o.csv, rp.allRows()); err != nil {
			return sums, fmt.Errorf("write csv: %w", err)
		}
	}
	if o.plot != "" {
		title := fmt.Sprintf("mqbench %s: %s, %d B, %d conns x %d window", o.mode, o.topic, o.size, o.conns, o.window)
		if err := writeSVG(o.plot, title, rp.allRows()); err != nil {
			return sums, fmt.Errorf("write plot: %w", err)
		}
	}
	return sums, nil
}

func runProduce(o *options, a *adminclient.Client, out io.Writer, stop <-chan struct{}) ([]summary, error) {
	targets, err := resolve(a, o, true)
	if err != nil {
		return nil, err
	}
	describe(out, o, targets)
	send := &role{name: "send"}
	return measured(o, out, stop, nil, send, func(runStop <-chan struct{}) error {
		return runProducers(o, targets, send, runStop)
	})
}

// measured reports on r while body runs, until body returns; body's stop
// closes when stop does, after -d (unless -count is set) or when done
// closes. It then prints the summaries and writes -csv / -plot.
func measured(o *options, out io.Writer, stop, done <-chan struct{}, r *role, body func(runStop <-chan struct{}) error) ([]summary, error) {
	rp := newReporter(out, o.interval, r)
	rp.header()
	d := o.duration
	if o.count > 0 {
		d = 0
	}
	runStop := deadline(stop, d, done)
	repStop := make(chan struct{})
	repDone := make(chan struct{})
	go func() { rp.run(repStop); close(repDone) }()
	start := time.Now()
	err := body(runStop)
	elapsed := time.Since(start)
	close(repStop)
	<-repDone
	sums, ferr := finish(o, rp, elapsed)
	return sums, errors.Join(err, ferr)
}

func startOffsets(a *adminclient.Client, o *options, targets []target) ([]int64, error) {
	at := make([]int64, len(targets))
	if o.from != "latest" {
		return at, nil
	}
	for i, t := range targets {
		off, err := maxOffset(a, t, t.topic)
		if err != nil {
			return nil, err
		}
		at[i] = off
	}
	return at, nil
}

func runConsume(o *options, a *adminclient.Client, out io.Writer, stop <-chan struct{}) ([]summary, error) {
	targets, err := resolve(a, o, false)
	if err != nil {
		return nil, err
	}
	at, err := startOffsets(a, o, targets)
	if err != nil {
		return nil, err
	}
	describe(out, o, targets)
	targets, at = perGroup(o, targets, at)
	name := "pull"
	if o.e2e {
		name = "e2e"
	}
	pull := &role{name: name}
	total := &counter{target: o.count, done: make(chan struct{})}
	return measured(o, out, stop, total.done, pull, func(runStop <-chan struct{}) error {
		return runConsumers(o, targets, at, pull, o.e2e, runStop, total, nil)
	})
}

// perGroup repeats every target (and its start offset) for each of the
// -groups groups, named <-g>_<k>; one group keeps -g as it is.
func perGroup(o *options, targets []target, at []int64) ([]target, []int64) {
	if o.groups <= 1 {
		return targets, at
	}
	ts := make([]target, 0, len(targets)*o.groups)
	offs := make([]int64, 0, len(at)*o.groups)
	for k := range o.groups {
		for i, t := range targets {
			t.group = fmt.Sprintf("%s_%d", o.group, k)
			ts = append(ts, t)
			offs = append(offs, at[i])
		}
	}
	return ts, offs
}

// runE2E consumes from the queues' current ends while producing (at -rate),
// and reports send round trip and born-to-consumed latency side by side.
//
// It also prints a FIRST line: the time from the topic's creation (with
// -create-topic; else from the run's start) to the first message consumed,
// and that message's own born-to-consumed latency: what a user of a new
// topic waits for its first message.
func runE2E(o *options, a *adminclient.Client, out io.Writer, stop <-chan struct{}) ([]summary, error) {
	wt, err := resolve(a, o, true)
	if err != nil {
		return nil, err
	}
	since := time.Now() // the topic exists (created by resolve with -create-topic)
	first := &firstMsg{}
	co := *o
	co.createTopic = false
	rt := wt
	if o.broker == "" && !o.createTopic {
		if rt, err = resolve(a, &co, false); err != nil {
			return nil, err
		}
	}
	at, err := startOffsets(a, o, rt)
	if err != nil {
		return nil, err
	}
	describe(out, o, wt)
	send, recv := &role{name: "send"}, &role{name: "e2e"}
	rp := newReporter(out, o.interval, send, recv)
	rp.header()
	total := &counter{}
	consStop := make(chan struct{})
	consErr := make(chan error, 1)
	start := time.Now()
	go func() { consErr <- runConsumers(&co, rt, at, recv, true, consStop, total, first) }()
	repStop := make(chan struct{})
	repDone := make(chan struct{})
	go func() { rp.run(repStop); close(repDone) }()
	d := o.duration
	if o.count > 0 {
		d = 0
	}
	perr := runProducers(o, wt, send, deadline(stop, d, nil))
	// Wait (up to 10 s) until everything acknowledged was consumed.
	var acked int64
	for _, s := range send.parts {
		acked += s.msgs.Load()
	}
	wait := time.Now().Add(10 * time.Second)
	for time.Now().Before(wait) {
		total.mu.Lock()
		n := total.n
		total.mu.Unlock()
		if n >= acked {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(consStop)
	cerr := <-consErr
	elapsed := time.Since(start)
	close(repStop)
	<-repDone
	sums, ferr := finish(o, rp, elapsed)
	if at := first.at.Load(); at > 0 {
		for i := range sums {
			if sums[i].role == "e2e" {
				sums[i].firstMs, sums[i].firstLatMs = ms(at-since.UnixNano()), ms(first.lat.Load())
			}
		}
		fmt.Fprintf(out, "FIRST topic=%s created=%v first_consumed_ms=%.3f first_e2e_ms=%.3f\n",
			o.topic, o.createTopic, ms(at-since.UnixNano()), ms(first.lat.Load()))
	}
	return sums, errors.Join(perr, cerr, ferr)
}

// runProbe retries until one message is accepted and prints the time since
// -since (the moment the broker was launched): start-up time to first send.
// With -route it waits for the route instead (probeRoute).
func runProbe(o *options, a *adminclient.Client, out io.Writer) error {
	since := time.Now()
	if o.since > 0 {
		since = time.Unix(0, o.since)
	}
	a.Timeout = time.Second
	if o.routeOnly {
		return probeRoute(o, a, out, since)
	}
	end := time.Now().Add(o.timeout)
	var last error
	for time.Now().Before(end) {
		targets, err := resolve(a, o, true)
		if err == nil {
			t := targets[0]
			resp, err := a.Invoke(t.addr, remoting.SendMessageV2, map[string]string{
				"a": o.group, "b": t.topic, "c": "TBW102", "d": "4", "e": fmt.Sprint(t.queueID), "f": "0",
				"g": fmt.Sprint(time.Now().UnixMilli()), "h": "0", "i": "WAIT\x01true\x02", "n": t.brokerName,
			}, make([]byte, o.size))
			switch {
			case err != nil:
				last = err
			case resp.Code == remoting.Success:
				fmt.Fprintf(out, "PROBE first_send_ms=%.1f\n", float64(time.Since(since))/1e6)
				return nil
			default:
				last = fmt.Errorf("send: code %d %s", resp.Code, resp.Remark)
			}
		} else {
			last = err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no send accepted within %s: %v", o.timeout, last)
}
