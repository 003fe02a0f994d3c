package compattest

// ACL 2.0's admin commands with Apache 5.3.3's mqadmin
// (createUser … listAcl, the codes 3001–3010), signed with a super user
// from ${ROCKETMQ_HOME}/conf/tools.yml as the tool signs: the same
// commands against rocketgo and against Apache's broker print the same
// lines and fail with the same code and remark. auth2MQAdminWant is what
// Apache 5.3.3 printed (make test-acl2-apache checks it still does).

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// auth2MQAdminSteps are the commands, with B the broker's address, N the
// name server's and C the cluster; each with Apache's stdout (B for the
// address, columns one space apart) and, for a failure, its "CODE: n
// DESC: remark" (stdout is then empty).
var auth2MQAdminSteps = []struct {
	args string
	out  string
	fail string
}{
	{"createUser -n N -b B -u admUser1 -p admPass1 -t Normal", "create user to B success.", ""},
	{"createUser -n N -b B -u admUser1 -p admPass1", "", "CODE: 16  DESC: The user is existed"},
	{"getUser -n N -b B -u admUser1", "#UserName #Password #UserType #UserStatus\nadmUser1 admPass1 Normal enable", ""},
	{"updateUser -n N -c C -u admUser1 -p admPass2", "update user to B success.", ""},
	{"updateUser -n N -b B -u admUser1 -s disable", "update user to B success.", ""},
	{"updateUser -n N -b B -u nobody1 -p admPass2", "", "CODE: 16  DESC: The user is not exist"},
	{"getUser -n N -b B -u admUser1", "#UserName #Password #UserType #UserStatus\nadmUser1 admPass2 Normal disable", ""},
	{"createUser -n N -b B -u admUser2 -p admPass3", "create user to B success.", ""},
	{"listUser -n N -b B -f adm", "#UserName #Password #UserType #UserStatus\nadmUser1 admPass2 Normal disable\nadmUser2 admPass3 Normal enable", ""},
	{"createAcl -n N -b B -s User:admUser1 -r Topic:adm*,Group:admG -a Pub,Sub -i 10.0.0.0/8 -d Allow", "create acl to B success.", ""},
	{"updateAcl -n N -c C -s User:admUser1 -r Topic:admT2 -a Sub -d Deny", "update acl to B success.", ""},
	{"createAcl -n N -b B -s User:nobody1 -r Topic:t -a Pub -d Allow", "", "CODE: 16  DESC: The subject of User:nobody1 is not exist."},
	{"createAcl -n N -b B -s User:admUser1 -r Topic:t -a Pub -i 10.0.0.0/33 -d Allow", "", "CODE: 16  DESC: The source ip is invalid."},
	{"getAcl -n N -b B -s User:admUser1", "#Subject #PolicyType #Resource #Actions #SourceIp #Decision\nUser:admUser1 Custom Topic:adm* [Pub, Sub] [10.0.0.0/8] Allow\nUser:admUser1 Custom Group:admG [Pub, Sub] [10.0.0.0/8] Allow\nUser:admUser1 Custom Topic:admT2 [Sub] null Deny", ""},
	{"listAcl -n N -b B -s admUser1", "#Subject #PolicyType #Resource #Actions #SourceIp #Decision\nUser:admUser1 Custom Topic:adm* [Pub, Sub] [10.0.0.0/8] Allow\nUser:admUser1 Custom Group:admG [Pub, Sub] [10.0.0.0/8] Allow\nUser:admUser1 Custom Topic:admT2 [Sub] null Deny", ""},
	{"listAcl -n N -b B -r Group", "#Subject #PolicyType #Resource #Actions #SourceIp #Decision\nUser:admUser1 Custom Group:admG [Pub, Sub] [10.0.0.0/8] Allow", ""},
	{"deleteAcl -n N -b B -s User:admUser1 -r Topic:admT2", "delete acl to B success.", ""},
	{"getAcl -n N -b B -s User:admUser1", "#Subject #PolicyType #Resource #Actions #SourceIp #Decision\nUser:admUser1 Custom Topic:adm* [Pub, Sub] [10.0.0.0/8] Allow\nUser:admUser1 Custom Group:admG [Pub, Sub] [10.0.0.0/8] Allow", ""},
	{"deleteUser -n N -b B -u admUser1", "delete user to B success.", ""},
	{"deleteUser -n N -b B -u admUser1", "delete user to B success.", ""},
	{"getUser -n N -b B -u admUser1", "", ""},
	{"getAcl -n N -b B -s User:admUser1", "", "CODE: 16  DESC: The subject is not exist."},
	{"listUser -n N -b B -f adm", "#UserName #Password #UserType #UserStatus\nadmUser2 admPass3 Normal enable", ""},
	// copyUser and copyAcl, from B to a second broker B2 with only the
	// super user: an ACL cannot go before its user; a user copied to a
	// broker that has it is updated, and so is an ACL.
	{"createAcl -n N -b B -s User:admUser2 -r Topic:cpT -a Pub -d Allow", "create acl to B success.", ""},
	{"copyAcl -n N -f B -t B2 -s User:admUser2", "", "CODE: 16  DESC: The subject is not exist."},
	{"copyUser -n N -f B -t B2 -u admUser2", "copy user of admUser2 from B to B2 success.", ""},
	{"copyUser -n N -f B -t B2", "copy user of admUser2 from B to B2 success.\ncopy user of rocketmq2 from B to B2 success.", ""},
	{"getUser -n N -b B2 -u admUser2", "#UserName #Password #UserType #UserStatus\nadmUser2 admPass3 Normal enable", ""},
	{"copyAcl -n N -f B -t B2 -s User:admUser2", "copy acl of User:admUser2 from B to B2 success.", ""},
	{"createAcl -n N -b B -s User:admUser2 -r Group:cpG -a Sub -d Deny", "create acl to B success.", ""},
	{"copyAcl -n N -f B -t B2", "copy acl of User:admUser2 from B to B2 success.", ""},
	{"getAcl -n N -b B2 -s User:admUser2", "#Subject #PolicyType #Resource #Actions #SourceIp #Decision\nUser:admUser2 Custom Topic:cpT [Pub] null Allow\nUser:admUser2 Custom Group:cpG [Sub] null Deny", ""},
}

var brokerFailure = regexp.MustCompile(`CODE: (\d+)\s+DESC: ([^\n]*)`)

func TestAuth2MQAdmin(t *testing.T) {
	requireJava(t)
	t.Parallel()
	cp := toolsClasspath(t)
	targets := strings.Split(envOr("ROCKETGO_AUTH2_TARGETS", "rocketgo"), ",")
	outs := map[string][]string{}
	for _, target := range targets {
		c := auth2Cluster(t, target, "auth2-adm")
		c2 := auth2Cluster(t, target, "auth2-adm2")
		home := t.TempDir()
		if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
			t.Fatal(err)
		}
		tools := "accessKey: " + auth2Super.AccessKey + "\nsecretKey: " + auth2Super.SecretKey + "\n"
		if err := os.WriteFile(filepath.Join(home, "conf", "tools.yml"), []byte(tools), 0o644); err != nil {
			t.Fatal(err)
		}
		java := startJavaAdmin(t, cp, home)
		for _, s := range auth2MQAdminSteps {
			args := strings.Fields(strings.NewReplacer("-n N", "-n "+c.nsAddr, "-b B2", "-b "+c2.brokerAddr, "-b B", "-b "+c.brokerAddr,
				"-f B", "-f "+c.brokerAddr, "-t B2", "-t "+c2.brokerAddr, "-c C", "-c "+clusterName).Replace(s.args))
			before := len(java.stderr.String())
			out := squeeze(strings.NewReplacer(c2.brokerAddr, "B2", c.brokerAddr, "B").Replace(java.run(t, args)))
			fail := ""
			if s.fail != "" {
				// The stack trace reaches stderr through exec's copier.
				deadline := time.Now().Add(2 * time.Second)
				for time.Now().Before(deadline) {
					if m := brokerFailure.FindStringSubmatch(java.stderr.String()[before:]); m != nil {
						fail = "CODE: " + m[1] + "  DESC: " + m[2]
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			outs[target] = append(outs[target], out+"\n"+fail)
			if out != s.out || fail != s.fail {
				t.Errorf("%s: mqadmin %s:\n%s\n%s\nwant\n%s\n%s", target, s.args, out, fail, s.out, s.fail)
			}
		}
	}
	if len(outs) == 2 {
		for i, s := range auth2MQAdminSteps {
			if g, a := outs["rocketgo"][i], outs["apache"][i]; g != a {
				t.Errorf("mqadmin %s differs:\nrocketgo:\n%s\napache:\n%s", s.args, g, a)
			}
		}
	}
}

// squeeze writes each line's fields separated by one space (the tool pads
// its columns) and drops blank lines.
func squeeze(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, strings.Join(f, " "))
		}
	}
	return strings.Join(out, "\n")
}
