module suite

go 1.22
