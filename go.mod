module github.com/robotsguard/robotsguard

go 1.26

require github.com/temoto/robotstxt v1.1.2

require (
	github.com/miekg/dns v1.1.73
	github.com/mssola/useragent v1.0.0
)

require (
	golang.org/x/net v0.57.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
