package broker

import (
	"strings"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
)

// CheckFilter is CHECK_CLIENT_CONFIG (46): whether the broker can filter a
// subscription of that expression type, and whether the expression
// compiles. A TAG subscription always can; a refusal carries Apache's code
// and remark (SYSTEM_ERROR when enablePropertyFilter is off,
// SUBSCRIPTION_PARSE_FAILED with the parse error otherwise).
func (b *Broker) CheckFilter(expressionType, expression string) error {
	if tables.IsTagType(expressionType) {
		return nil
	}
	if !strings.EqualFold(expressionType, "SQL92") || !b.Config().EnablePropertyFilter {
		return filterUnsupported(expressionType)
	}
	if _, err := b.Filters.Compile(expression); err != nil {
		return &remoting.Refusal{Code: remoting.SubscriptionParseFailed, Remark: err.Error(), Err: err}
	}
	return nil
}
