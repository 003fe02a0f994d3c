// Command mqadmin is a Go subset of Apache RocketMQ's mqadmin, for hosts and
// images without Java: the same subcommand names, flags and output.
//
//	mqadmin topicList      -n ns:9876
//	mqadmin updateTopic    -n ns:9876 (-b broker:10911 | -c cluster) -t topic [-r 8 -w 8 -p 6 -o false -u false -s false -a +k=v]
//	mqadmin deleteTopic    -n ns:9876 -c cluster -t topic
//	mqadmin getBrokerConfig -n ns:9876 (-b broker:10911 | -c cluster)
//
// -n defaults to NAMESRV_ADDR, as Apache's. Where Apache prints a Java
// hash container (a topic list, a properties table, a cluster's brokers)
// its order is the hash's; here it is sorted. A failure prints the error on
// stderr and exits 1 (Apache prints a stack trace and exits 0).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

type command struct {
	name, desc string
	run        func(a *admin, fs *flag.FlagSet, args []string) error
}

var commands = []command{
	{"topicList", "Fetch all topic list from name server.", topicList},
	{"updateTopic", "Update or create topic.", updateTopic},
	{"deleteTopic", "Delete topic from broker and NameServer.", deleteTopic},
	{"getBrokerConfig", "Get broker config by cluster or special broker.", getBrokerConfig},
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, out, errOut io.Writer) int {
	if len(args) == 0 || args[0] == "help" && len(args) == 1 {
		fmt.Fprintf(out, "The most commonly used mqadmin commands are:\n")
		for _, c := range commands {
			fmt.Fprintf(out, "   %-35s %s\n", c.name, c.desc)
		}
		fmt.Fprintf(out, "\nSee 'mqadmin help <command>' for more information on a specific command.\n")
		return 0
	}
	name := args[0]
	if name == "help" {
		name = args[1]
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		fs := flag.NewFlagSet("mqadmin "+c.name, flag.ContinueOnError)
		fs.SetOutput(errOut)
		fs.String("n", os.Getenv("NAMESRV_ADDR"), "Name server address list, eg: '192.168.0.1:9876;192.168.0.2:9876'")
		a := &admin{cl: remoting.NewClient(zerolog.Nop()), out: out}
		defer a.cl.Close()
		if err := c.run(a, fs, args[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			fmt.Fprintf(errOut, "mqadmin %s: %v\n", c.name, err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(out, "The sub command %s not exist.\n", name)
	return 1
}

// admin reaches name servers and brokers over Remoting.
type admin struct {
	cl  *remoting.Client
	out io.Writer
	ns  []string
}

// parse parses fs and takes the name servers from -n.
func (a *admin) parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, s := range strings.Split(fs.Lookup("n").Value.String(), ";") {
		if s = strings.TrimSpace(s); s != "" {
			a.ns = append(a.ns, s)
		}
	}
	if len(a.ns) == 0 {
		return errors.New("no name server address: -n or NAMESRV_ADDR")
	}
	return nil
}

// call sends one request and checks the answer is SUCCESS.
func (a *admin) call(addr string, code int32, ext map[string]string, body []byte) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := a.cl.Invoke(ctx, addr, remoting.NewRequest(code, ext, body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	if resp.Code != remoting.Success {
		return nil, fmt.Errorf("%s: CODE: %d DESC: %s", addr, resp.Code, resp.Remark)
	}
	return resp, nil
}

// callNamesrv tries the name servers in order.
func (a *admin) callNamesrv(code int32, ext map[string]string) (*remoting.Command, error) {
	var last error
	for _, addr := range a.ns {
		resp, err := a.call(addr, code, ext, nil)
		if err == nil {
			return resp, nil
		}
		last = err
	}
	return nil, last
}

// clusterInfo is GET_BROKER_CLUSTER_INFO's body.
type clusterInfo struct {
	BrokerAddrTable map[string]struct {
		Cluster     string            `json:"cluster"`
		BrokerName  string            `json:"brokerName"`
		BrokerAddrs map[string]string `json:"brokerAddrs"`
	} `json:"brokerAddrTable"`
	ClusterAddrTable map[string][]string `json:"clusterAddrTable"`
}

func (a *admin) clusterInfo() (*clusterInfo, error) {
	resp, err := a.callNamesrv(remoting.GetBrokerClusterInfo, nil)
	if err != nil {
		return nil, err
	}
	var ci clusterInfo
	if err := json.Unmarshal(remoting.QuoteIntKeys(resp.Body), &ci); err != nil {
		return nil, fmt.Errorf("cluster info: %w", err)
	}
	return &ci, nil
}

// clusterBrokers asks the name servers for cluster's brokers.
func (a *admin) clusterBrokers(cluster string) ([]brokerAddrs, error) {
	ci, err := a.clusterInfo()
	if err != nil {
		return nil, err
	}
	return ci.brokers(strings.TrimSpace(cluster))
}

// brokers lists cluster's brokers (sorted by name): each master's address
// ("" when it has none) and its slaves' (sorted by id), as
// CommandUtil.fetchMasterAndSlaveDistinguish.
func (ci *clusterInfo) brokers(cluster string) ([]brokerAddrs, error) {
	names, ok := ci.ClusterAddrTable[cluster]
	if !ok {
		return nil, fmt.Errorf("cluster %q not found: make sure the specified clusterName exists or the name server connected to is correct", cluster)
	}
	sort.Strings(names)
	var out []brokerAddrs
	for _, n := range names {
		bd := ci.BrokerAddrTable[n]
		b := brokerAddrs{name: n, master: bd.BrokerAddrs["0"]}
		ids := make([]int, 0, len(bd.BrokerAddrs))
		for id := range bd.BrokerAddrs {
			if i, err := strconv.Atoi(id); err == nil && i != 0 {
				ids = append(ids, i)
			}
		}
		sort.Ints(ids)
		for _, i := range ids {
			b.slaves = append(b.slaves, bd.BrokerAddrs[strconv.Itoa(i)])
		}
		out = append(out, b)
	}
	return out, nil
}

type brokerAddrs struct {
	name, master string
	slaves       []string
}

func topicList(a *admin, fs *flag.FlagSet, args []string) error {
	cluster := fs.Bool("c", false, "clusterModel")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if *cluster {
		return errors.New("-c (clusterModel) is not implemented by this mqadmin")
	}
	resp, err := a.callNamesrv(remoting.GetAllTopicListFromNameServer, nil)
	if err != nil {
		return err
	}
	var tl struct {
		TopicList []string `json:"topicList"`
	}
	if err := json.Unmarshal(resp.Body, &tl); err != nil {
		return fmt.Errorf("topic list: %w", err)
	}
	sort.Strings(tl.TopicList)
	for _, t := range tl.TopicList {
		fmt.Fprintf(a.out, "%s\n", t)
	}
	return nil
}
