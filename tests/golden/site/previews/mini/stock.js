window.rulesdslPreviews("mini/stock.html", {});
