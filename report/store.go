package report

import (
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsguard/robotsguard/enforce/redisstore"
)

// StoreCounts are the counts a zone's Redis store keeps up to date
// (metrics.Collectors has them).
type StoreCounts interface {
	SetStoreUp(zone string, up bool)
	StoreFallback(zone string)
}

// StoreHooks returns the hooks (redisstore.Hooks) through which the Redis
// store of zone reports to log, the logger of reload and configuration
// problems, and to m: each request decided without Redis is counted; an
// outage is logged once at WARN, with onError (how requests are decided
// meanwhile), and the return once at INFO; the fleet memory's reports at
// their level, with their counts.
func StoreHooks(log *zap.Logger, m StoreCounts, zone, onError string) redisstore.Hooks {
	return redisstore.Hooks{
		Fallback: func() { m.StoreFallback(zone) },
		Down: func(err error) {
			m.SetStoreUp(zone, false)
			log.Warn("the Redis store cannot be reached; deciding without it until it answers again",
				zap.String("zone", zone), zap.String("on_error", onError), zap.Error(err))
		},
		Up: func() {
			m.SetStoreUp(zone, true)
			log.Info("the Redis store answers again", zap.String("zone", zone))
		},
		Memory: func(r redisstore.Report) {
			log.Log(zapcore.Level(r.Level()), r.Msg, append(redisstore.Fields(r, zap.Int), zap.String("zone", zone), zap.Error(r.Err))...)
		},
	}
}
