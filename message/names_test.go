package message

import (
	"errors"
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

func TestValidTopicName(t *testing.T) {
	illegal := "illegal" // RemarkTopicIllegal of the case's topic
	tests := []struct {
		name, topic, remark string
	}{
		{"plain", "TopicTest", ""},
		{"all legal chars", "a-Z_0|9%RETRY%", ""},
		{"127 chars", strings.Repeat("t", 127), ""},
		{"retry topic of a 120-char group", RetryGroupPrefix + strings.Repeat("g", 120), ""},
		{"empty", "", "The specified topic is blank."},
		{"spaces", "  \t", "The specified topic is blank."},
		{"java whitespace controls", "\x1c\x1f", "The specified topic is blank."},
		{"unicode space", "\u2003", "The specified topic is blank."},
		{"no-break space is not blank", "\u00a0", illegal},
		{"dot dot", "..", illegal},
		{"dot", ".", illegal},
		{"parent path", "../../x", illegal},
		{"slash", "a/b", illegal},
		{"absolute", "/tmp", illegal},
		{"nul", "a\x00b", illegal},
		{"control", "a\x01", illegal},
		{"space inside", "a b", illegal},
		{"non-ascii", "tópico", illegal},
		{"128 chars", strings.Repeat("t", 128), "The specified topic: " + strings.Repeat("t", 128) + ", is longer than topic max length: 127"},
		{"pop retry topic of the longest group and topic", PopRetryTopic(strings.Repeat("t", 127), strings.Repeat("g", 120)), ""},
		{"DLQ topic of 256 chars", DLQGroupPrefix + strings.Repeat("g", 251),
			"The specified topic is DLQ or Retry topic: %DLQ%" + strings.Repeat("g", 251) + ", and it's longer than topic max length: 255"},
		{"illegal wins over length", strings.Repeat("/", 200), illegal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.remark == illegal {
				tc.remark = RemarkTopicIllegal(tc.topic)
			}
			err := ValidTopicName(tc.topic)
			if tc.remark == "" {
				if err != nil {
					t.Fatalf("ValidTopicName(%q) = %v, want nil", tc.topic, err)
				}
				return
			}
			var inv *remoting.Refusal
			if !errors.As(err, &inv) || inv.Code != remoting.InvalidParameter || inv.Remark != tc.remark ||
				!errors.Is(err, ErrTopicInvalid) {
				t.Fatalf("ValidTopicName(%q) = %v, want remark %q wrapping ErrTopicInvalid", tc.topic, err, tc.remark)
			}
		})
	}
}

func TestValidGroupName(t *testing.T) {
	tests := []struct {
		name, group, remark string
	}{
		{"plain", "CG_orders-1", ""},
		{"120 chars", strings.Repeat("g", 120), ""},
		{"blank", "", "The specified group is blank."},
		{"path", "../../../tmp/x", "The specified group: ../../../tmp/x, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"control", "g\x01", "The specified group: g\x01, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"121 chars", strings.Repeat("g", 121), "The specified group: " + strings.Repeat("g", 121) + ", is longer than group max length: 120"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidGroupName(tc.group)
			if tc.remark == "" {
				if err != nil {
					t.Fatalf("ValidGroupName(%q) = %v", tc.group, err)
				}
				if ValidTopicName(RetryGroupPrefix+tc.group) != nil || ValidTopicName(DLQGroupPrefix+tc.group) != nil {
					t.Fatalf("a valid group %q must make valid retry and DLQ topics", tc.group)
				}
				return
			}
			var inv *remoting.Refusal
			if !errors.As(err, &inv) || inv.Code != remoting.InvalidParameter || inv.Remark != tc.remark ||
				!errors.Is(err, ErrGroupInvalid) {
				t.Fatalf("ValidGroupName(%q) = %v, want %q", tc.group, err, tc.remark)
			}
		})
	}
}
