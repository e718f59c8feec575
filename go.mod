module github.com/robotsguard/robotsguard

go 1.26

require github.com/temoto/robotstxt v1.1.2

require github.com/mssola/useragent v1.0.0
