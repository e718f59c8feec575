module github.com/robotsguard/robotsguard

go 1.26

require github.com/temoto/robotstxt v1.1.2
