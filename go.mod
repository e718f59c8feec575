module github.com/robotsguard/robotsguard

go 1.26
