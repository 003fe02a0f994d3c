// Command mqadmin is Apache RocketMQ's mqadmin for hosts and images without
// Java: Apache 5.5.0's command names, options (short and long, read as
// commons-cli's DefaultParser reads them, required ones enforced with its
// messages) and printf formats, for topics, groups, offsets, messages,
// brokers, exports, name servers, controllers, lite topics and ACL 2.0.
// docs/mqadmin.md lists the commands, those left out, and where the output
// differs.
//
//	mqadmin                              the command list
//	mqadmin help <cmd>                   its usage block (HelpFormatter's)
//	mqadmin <cmd> -n ns:9876 [options]   or --namesrvAddr=ns:9876, NAMESRV_ADDR
//
// Files: options.go (the parser and usage), one file per family of
// commands; the requests are internal/adminclient's.
//
// -Dtls.enable=true (on the command line or in JAVA_OPT) dials TLS, with
// Apache's tls.client.* keys; ${ROCKETMQ_HOME}/conf/tools.yml's accessKey
// and secretKey sign every request, as Apache's tools sign. Where Apache
// prints a Java hash container (a topic list, a properties table, a
// cluster's brokers) its order is the hash's; here it is sorted, but for a
// message's properties and the queues a consumer walks (javaHashOrder). A
// refused command line prints commons-cli's message and the usage and exits
// 1, as Apache's; a failed request prints the error on stderr and exits 1
// (Apache prints a stack trace and exits 0); each request waits at most 5 s.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/internal/sysprops"
	"github.com/rocketgo/rocketgo/remoting"
)

type command struct {
	name, desc string
	run        func(a *admin, o *options, args []string) error
}

var commands = []command{
	{"topicList", "Fetch all topic list from name server.", topicList},
	{"updateTopic", "Update or create topic.", updateTopic},
	{"updateTopicList", "create or update topic in batch", updateTopicList},
	{"deleteTopic", "Delete topic from broker and NameServer.", deleteTopic},
	{"getBrokerConfig", "Get broker config by cluster or special broker.", getBrokerConfig},
	{"producer", "Query producer's instances, connection, status, etc.", producer},
	{"clusterList", "List cluster infos.", clusterList},
	{"clusterRT", "List All clusters Message Send RT.", clusterRT},
	{"checkMsgSendRT", "Check message send response time.", checkMsgSendRT},
	{"addBroker", "Add a broker to specified container.", addBroker},
	{"removeBroker", "Remove a broker from specified container.", removeBroker},
	{"resetMasterFlushOffset", "Reset master flush offset in slave.", resetMasterFlushOffset},
	{"brokerStatus", "Fetch broker runtime status data.", brokerStatus},
	{"topicRoute", "Examine topic route info.", topicRoute},
	{"topicStatus", "Examine topic Status info.", topicStatus},
	{"consumerProgress", "Query consumer's progress, speed.", consumerProgress},
	{"consumerStatus", "Query consumer's internal data structure.", consumerStatus},
	{"consumerConnection", "Query consumer's socket connection, client version and subscription.", consumerConnection},
	{"producerConnection", "Query producer's socket connection and client version.", producerConnection},
	{"updateSubGroup", "Update or create subscription group.", updateSubGroup},
	{"deleteSubGroup", "Delete subscription group from broker.", deleteSubGroup},
	{"updateSubGroupList", "Update or create subscription group in batch", updateSubGroupList},
	{"setConsumeMode", "Set consume message mode. pull/pop etc.", setConsumeMode},
	{"updateBrokerConfig", "Update broker's config.", updateBrokerConfig},
	{"resetOffsetByTime", "Reset consumer offset by timestamp(without client restart).", resetOffsetByTime},
	{"queryMsgById", "Query Message by Id.", queryMsgByID},
	{"queryMsgByKey", "Query Message by Key.", queryMsgByKey},
	{"queryMsgByOffset", "Query Message by offset.", queryMsgByOffset},
	{"queryMsgByUniqueKey", "Query Message by Unique key.", queryMsgByUniqueKey},
	{"queryMsgTraceById", "Query a message trace.", queryMsgTraceByID},
	{"updateTopicPerm", "Update topic perm.", updateTopicPerm},
	{"topicClusterList", "Get cluster info for topic.", topicClusterList},
	{"brokerConsumeStats", "Fetch broker consume stats data.", brokerConsumeStats},
	{"wipeWritePerm", "Wipe write perm of broker in all name server you defined in the -n param.", wipeWritePerm},
	{"addWritePerm", "Add write perm of broker in all name server you defined in the -n param.", addWritePerm},
	{"cleanExpiredCQ", "Clean expired ConsumeQueue on broker.", cleanExpiredCQ},
	{"cleanUnusedTopic", "Clean unused topic on broker.", cleanUnusedTopic},
	{"deleteExpiredCommitLog", "Delete expired CommitLog files.", deleteExpiredCommitLog},
	{"statsAll", "Topic and Consumer tps stats.", statsAll},
	{"getNamesrvConfig", "Get configs of name server.", getNamesrvConfig},
	{"updateNamesrvConfig", "Update configs of name server.", updateNamesrvConfig},
	{"getConsumerConfig", "Get consumer config by subscription group name.", getConsumerConfig},
	{"queryCq", "Query cq command.", queryCq},
	{"sendMessage", "Send a message.", sendMessage},
	{"consumeMessage", "Consume message.", consumeMessage},
	{"printMsg", "Print Message Detail.", printMsg},
	{"printMsgByQueue", "Print Message Detail by queueId.", printMsgByQueue},
	{"sendMsgStatus", "Send msg to broker.", sendMsgStatus},
	{"cloneGroupOffset", "Clone offset from other group.", cloneGroupOffset},
	{"skipAccumulatedMessage", "Skip all messages that are accumulated (not consumed) currently.", skipAccumulatedMessage},
	{"updateKvConfig", "Create or update KV config.", updateKvConfig},
	{"deleteKvConfig", "Delete KV config.", deleteKvConfig},
	{"updateOrderConf", "Create or update or delete order conf.", updateOrderConf},
	{"allocateMQ", "Allocate MQ.", allocateMQ},
	{"dumpCompactionLog", "Parse compaction log to message.", dumpCompactionLog},
	{"getColdDataFlowCtrInfo", "Get cold data flow ctr info.", getColdDataFlowCtrInfo},
	{"updateColdDataFlowCtrGroupConfig", "Add or update cold data flow ctr group config.", updateColdDataFlowCtrGroupConfig},
	{"removeColdDataFlowCtrGroupConfig", "Remove consumer from cold ctr config.", removeColdDataFlowCtrGroupConfig},
	{"setCommitLogReadAheadMode", "Set read ahead mode for all commitlog files.", setCommitLogReadAheadMode},
	{"createUser", "Create user to cluster.", createUser},
	{"updateUser", "Update user to cluster.", updateUser},
	{"deleteUser", "Delete user from cluster.", deleteUser},
	{"getUser", "Get user from cluster.", getUser},
	{"listUser", "List user from cluster.", listUser},
	{"copyUser", "Copy user to cluster.", copyUser},
	{"createAcl", "Create acl to cluster.", createAcl},
	{"updateAcl", "Update acl to cluster.", updateAcl},
	{"deleteAcl", "Delete acl from cluster.", deleteAcl},
	{"getAcl", "Get acl from cluster.", getAcl},
	{"listAcl", "List acl from cluster.", listAcl},
	{"copyAcl", "Copy acl to cluster.", copyAcl},
	{"exportMetadata", "Export metadata.", exportMetadata},
	{"exportConfigs", "Export configs.", exportConfigs},
	{"exportMetrics", "Export metrics.", exportMetrics},
	{"exportPopRecord", "Export pop consumer record", exportPopRecord},
	{"haStatus", "Fetch ha runtime status data.", haStatus},
	{"getSyncStateSet", "Fetch syncStateSet for target brokers.", getSyncStateSet},
	{"getBrokerEpoch", "Fetch broker epoch entries.", getBrokerEpoch},
	{"getControllerMetaData", "Get controller cluster's metadata.", getControllerMetaData},
	{"getControllerConfig", "Get controller config.", getControllerConfig},
	{"updateControllerConfig", "Update controller config.", updateControllerConfig},
	{"electMaster", "Re-elect the specified broker as master.", electMaster},
	{"cleanBrokerMetadata", "Clean metadata of broker on controller.", cleanBrokerMetadata},
	{"rocksDBConfigToJson", rocksDBConfigToJSONDesc, rocksDBConfigToJSON},
	{"checkRocksdbCqWriteProgress", "check if rocksdb cq is same as file cq", checkRocksdbCqWriteProgress},
	{"switchTimerEngine", "switch the engine of timer message in broker", switchTimerEngine},
	{"getBrokerLiteInfo", "Get broker lite info.", getBrokerLiteInfo},
	{"getParentTopicInfo", "Get parent topic info.", getParentTopicInfo},
	{"getLiteTopicInfo", "Get lite topic info.", getLiteTopicInfo},
	{"getLiteClientInfo", "Get lite client info.", getLiteClientInfo},
	{"getLiteGroupInfo", "Get lite group info.", getLiteGroupInfo},
	{"triggerLiteDispatch", "Trigger Lite Dispatch.", triggerLiteDispatch},
}

// callTimeout bounds each request (a host that accepts and never answers
// fails the command, it does not hang it); tests shorten it.
var callTimeout = adminclient.DefaultTimeout

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, out, errOut io.Writer) int {
	// -Dtls.enable=true and the other tls.client.* keys, anywhere on the
	// line or in JAVA_OPT, as Apache's tools take them.
	props, args := sysprops.Split(args)
	tl, err := sysprops.ClientTLS(props, zerolog.Nop())
	if err != nil {
		fmt.Fprintf(errOut, "mqadmin: %v\n", err)
		return 1
	}
	ak, sk, signed, err := toolsCredentials(props)
	if err != nil {
		fmt.Fprintf(errOut, "mqadmin: %v\n", err)
		return 1
	}
	if len(args) == 0 || args[0] == "help" && len(args) == 1 {
		fmt.Fprintf(out, "The most commonly used mqadmin commands are:\n")
		for _, c := range commands {
			fmt.Fprintf(out, "   %-35s %s\n", c.name, c.desc)
		}
		fmt.Fprintf(out, "\nSee 'mqadmin help <command>' for more information on a specific command.\n")
		return 0
	}
	name, rest := args[0], args[1:]
	helpOnly := name == "help" && len(args) == 2 // Apache: exactly "help <cmd>"
	if helpOnly {
		name, rest = args[1], nil
	}
	for _, c := range commands {
		if !strings.EqualFold(c.name, name) { // Apache: equalsIgnoreCase
			continue
		}
		o := newOptions("mqadmin " + c.name)
		o.Bool("h", "help", "Print help")
		o.String("n", "namesrvAddr", "Name server address list, eg: '192.168.0.1:9876;192.168.0.2:9876'")
		a := &admin{Client: adminclient.New(nil), out: out, errOut: errOut, opts: o, helpOnly: helpOnly}
		a.SetTLS(tl)
		if signed {
			a.SetCredentials(ak, sk)
		}
		a.Timeout = callTimeout
		defer a.Close()
		err := c.run(a, o, rest)
		var pe *parseError
		switch {
		case err == nil, errors.Is(err, errHelp):
			return 0
		case errors.As(err, &pe): // commons-cli: the message, the usage, exit 1
			fmt.Fprintln(errOut, pe.msg)
			o.usage(out)
			return 1
		}
		fmt.Fprintf(errOut, "mqadmin %s: %v\n", c.name, err)
		return 1
	}
	fmt.Fprintf(out, "The sub command %s not exist.\n", name)
	return 1
}

// admin runs one subcommand: its control-plane client and its output.
type admin struct {
	*adminclient.Client
	out    io.Writer
	errOut io.Writer // what Apache's tool prints as a stack trace and goes on
	// printBody: print message bodies too (queryMsgById/ByOffset -f).
	printBody bool
	opts      *options
	helpOnly  bool // "mqadmin help <cmd>": print the usage, parse nothing
}

// parse reads the command line into o as Apache's DefaultParser does, and
// takes the name servers from -n. With -h, or for "mqadmin help <cmd>", it
// prints the usage and returns errHelp.
func (a *admin) parse(o *options, args []string) error {
	if a.helpOnly {
		o.usage(a.out)
		return errHelp
	}
	if err := o.parse(args); err != nil {
		return err
	}
	if o.Given("h") {
		o.usage(a.out)
		return errHelp
	}
	if err := o.convert(); err != nil {
		return err
	}
	ns := o.lookup("n").value
	if !o.Given("n") {
		ns = os.Getenv("NAMESRV_ADDR")
	}
	a.NameServers = adminclient.ParseNameServers(ns)
	return nil
}

// usage prints the subcommand's usage on stdout, as Apache's tools do when
// the options given leave nothing to do.
func (a *admin) usage() { a.opts.usage(a.out) }

// addrsOf lists the brokers' master addresses, and with slaves theirs too,
// sorted (Apache collects them in a HashSet).
func addrsOf(bs []adminclient.Broker, slaves bool) []string {
	var out []string
	for _, b := range bs {
		if b.Master != "" {
			out = append(out, b.Master)
		}
		if slaves {
			out = append(out, b.Slaves...)
		}
	}
	sort.Strings(out)
	return out
}

// clusterBrokers asks the name servers for cluster's brokers.
func (a *admin) clusterBrokers(cluster string) ([]adminclient.Broker, error) {
	ci, err := a.ClusterInfo()
	if err != nil {
		return nil, err
	}
	return ci.Brokers(cluster)
}

func topicList(a *admin, o *options, args []string) error {
	cluster := o.Bool("c", "clusterModel", "clusterModel")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if *cluster {
		return a.topicListClusters()
	}
	topics, err := a.topicNames()
	if err != nil {
		return err
	}
	for _, t := range topics {
		fmt.Fprintf(a.out, "%s\n", t)
	}
	return nil
}

// topicNames is the name servers' topic list, sorted (Apache: a HashSet).
func (a *admin) topicNames() ([]string, error) {
	resp, err := a.CallNamesrv(remoting.GetAllTopicListFromNameServer, nil)
	if err != nil {
		return nil, err
	}
	var tl struct {
		TopicList []string `json:"topicList"`
	}
	if err := json.Unmarshal(resp.Body, &tl); err != nil {
		return nil, fmt.Errorf("topic list: %w", err)
	}
	sort.Strings(tl.TopicList)
	return tl.TopicList, nil
}
