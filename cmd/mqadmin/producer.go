package main

import (
	"fmt"
	"strings"
)

// producer lists the producers connected to the broker of -b, by group in
// the order of the broker's answer (Apache's tool walks the HashMap it
// decodes), each as ProducerInfo.toString.
func producer(a *admin, o *options, args []string) error {
	broker := o.Req("b", "broker", "broker address")
	if err := a.parse(o, args); err != nil {
		return err
	}
	groups, err := a.AllProducerInfo(strings.TrimSpace(*broker))
	if err != nil {
		return err
	}
	for _, g := range groups {
		if len(g.Producers) == 0 {
			fmt.Fprintf(a.out, "producer group (%s) instances are empty\n", g.Group)
			continue
		}
		for _, p := range g.Producers {
			fmt.Fprintf(a.out, "producer group (%s) instance : clientId=%s,remoteIP=%s, language=%s, version=%d, lastUpdateTimestamp=%d\n",
				g.Group, p.ClientID, p.RemoteIP, p.Language, p.Version, p.LastUpdateTimestamp)
		}
	}
	return nil
}
