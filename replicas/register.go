package replicas

// Registration as Apache's ReplicasManager.register does it, resumable
// after a crash at any step:
//
//	brokerIdentity exists            → registered id, go to 3
//	brokerIdentity-temp exists       → offered id, go to 2
//	1. get-next-id (1012), write brokerIdentity-temp (id, "<addr>;<millis>")
//	2. apply-id (1013); refused → delete the temp file, fail (retry from 1);
//	   accepted → write brokerIdentity, delete the temp file
//	3. register (1003) → the set's master, epoch and SyncStateSet
//
// A file naming another cluster or broker name fails registration: the
// operator changed the config under an existing store.

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Broker names the registering broker.
type Broker struct {
	Cluster, BrokerName string
	Addr                string // ip:port of its Remoting server
}

// Register returns the broker's controller id and its set's state as the
// controller answered the register request.
func Register(ctx context.Context, c *Client, files IdentityFiles, b Broker) (int64, ReplicaState, error) {
	id, ok, err := files.Read()
	if err != nil {
		return 0, ReplicaState{}, err
	}
	if ok {
		if err := sameBroker(id, b, files.path(false)); err != nil {
			return 0, ReplicaState{}, err
		}
	} else if id, err = applyID(ctx, c, files, b); err != nil {
		return 0, ReplicaState{}, err
	}
	st, err := c.Register(ctx, b.Cluster, b.BrokerName, id.BrokerID, b.Addr)
	if err != nil {
		return 0, ReplicaState{}, fmt.Errorf("register broker id %d: %w", id.BrokerID, err)
	}
	return id.BrokerID, st, nil
}

// applyID runs steps 1 and 2 and leaves brokerIdentity written.
func applyID(ctx context.Context, c *Client, files IdentityFiles, b Broker) (Identity, error) {
	temp, ok, err := files.ReadTemp()
	if err != nil {
		return Identity{}, err
	}
	if ok {
		if err := sameBroker(temp, b, files.path(true)); err != nil {
			return Identity{}, err
		}
	} else {
		next, err := c.NextBrokerID(ctx, b.Cluster, b.BrokerName)
		if err != nil {
			return Identity{}, fmt.Errorf("get next broker id: %w", err)
		}
		temp = Identity{Cluster: b.Cluster, BrokerName: b.BrokerName, BrokerID: next,
			CheckCode: b.Addr + ";" + strconv.FormatInt(time.Now().UnixMilli(), 10)}
		if err := files.WriteTemp(temp); err != nil {
			return Identity{}, err
		}
	}
	if err := c.ApplyBrokerID(ctx, b.Cluster, b.BrokerName, temp.BrokerID, temp.CheckCode); err != nil {
		// Another broker took the id (or the check code is stale): start
		// over with a fresh id next time, as Apache does.
		if rmErr := files.RemoveTemp(); rmErr != nil {
			return Identity{}, fmt.Errorf("apply broker id %d: %w (and %w)", temp.BrokerID, err, rmErr)
		}
		return Identity{}, fmt.Errorf("apply broker id %d: %w", temp.BrokerID, err)
	}
	id := Identity{Cluster: b.Cluster, BrokerName: b.BrokerName, BrokerID: temp.BrokerID}
	if err := files.Write(id); err != nil {
		return Identity{}, err
	}
	if err := files.RemoveTemp(); err != nil {
		return Identity{}, err
	}
	return id, nil
}

func sameBroker(id Identity, b Broker, path string) error {
	if id.Cluster != b.Cluster || id.BrokerName != b.BrokerName {
		return fmt.Errorf("%s names %s/%s, the broker is %s/%s: %w", path, id.Cluster, id.BrokerName,
			b.Cluster, b.BrokerName, ErrIdentity)
	}
	return nil
}
